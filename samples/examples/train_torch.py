#!/usr/bin/python3
"""Train a small CNN on the samples dataset through libdata's PyTorch adapter.

    PYTHONPATH=bindings/python LIBDATA_LIBRARY=build/libdata.so \
        /usr/bin/python3 samples/examples/train_torch.py [--epochs 50] [--workers 2]

samples/images (4 classes: circle, square, stripes, triangle) is converted once with
libdata.convert() from the Caffe list files samples/train.txt (128 images) and samples/val.txt
(32 images), fitted into --size x --size (mode "pad": shapes keep their aspect). Training reads
random resized crops (torchvision's RandomResizedCrop: a random 35-100 % of the area at an
aspect ratio of 3/4 to 4/3, resampled to --crop x --crop) with random mirroring, float32 with
the mean removed and scaled by 1/255, through libdata.torch.Dataset and a DataLoader with
worker processes; validation reads center crops.
Prints the validation accuracy after each epoch and at the end (chance is 25%).
"""
import argparse
import os
import sys
import time

import torch
from torch import nn
from torch.utils.data import DataLoader

import libdata
import libdata.torch

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLES = os.path.normpath(os.path.join(HERE, ".."))
MEAN = [0.45 * 255] * 3  # rough per-channel mean of the samples (subtracted before scaling)


def make(out_dir, name, size):
    out = os.path.join(out_dir, f"samples_{name}_{size}.h5")
    if not os.path.exists(out):
        s = libdata.convert(os.path.join(SAMPLES, "images"), out, resize=size, mode="pad",
                            list_file=os.path.join(SAMPLES, f"{name}.txt"))
        print(f"converted {name}: {s.converted} images ({s.skipped} skipped) -> {out}")
    return out


class PerImageNorm(nn.Module):
    """Zero mean, unit variance per image and channel: the pictures range from saturated
    colour to faint gray, and the class is in the shape, not the contrast."""
    def forward(self, x):
        m = x.mean((2, 3), keepdim=True)
        return (x - m) / (x.std((2, 3), keepdim=True) + 0.05)


def model(classes=4):
    def block(cin, cout):
        return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False),
                             nn.BatchNorm2d(cout), nn.ReLU(inplace=True), nn.MaxPool2d(2))
    return nn.Sequential(PerImageNorm(), block(3, 16), block(16, 32), block(32, 64),
                         nn.AdaptiveMaxPool2d(1), nn.Flatten(), nn.Dropout(0.2),
                         nn.Linear(64, classes))


def rotate_flip(x):
    """The classes do not change under rotations by 90 degrees and flips: 8x more views of the
    128 training images (libdata already mirrors left-right and crops at random)."""
    x = torch.rot90(x, int(torch.randint(4, ())), (2, 3))
    return x.flip(2) if bool(torch.randint(2, ())) else x


def evaluate(net, loader):
    net.eval()
    right = total = 0
    with torch.no_grad():
        for x, y in loader:
            right += int((net(x).argmax(1) == y).sum())
            total += len(y)
    net.train()
    return right / max(total, 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--epochs", type=int, default=50)
    ap.add_argument("--size", type=int, default=32, help="images are fitted into size x size")
    ap.add_argument("--crop", type=int, default=0, help="crop side (default: 7/8 of size)")
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--time-limit", type=float, default=120, help="seconds of training at most")
    ap.add_argument("--out", default=os.environ.get("TMPDIR", "/tmp"),
                    help="folder for the converted datasets")
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(max(1, os.cpu_count() or 1))

    crop = args.crop or args.size * 7 // 8
    train_h5, val_h5 = make(args.out, "train", args.size), make(args.out, "val", args.size)
    common = dict(dtype="float32", mean=MEAN, scale=1 / 255)
    # ImageNet's recipe is random_resized_crop=(224, (0.08, 1.0), (3/4, 4/3)); these 32-pixel
    # shapes keep at least 35 % of their area so that the class stays visible.
    train = libdata.torch.Dataset(train_h5, batch_size=args.batch, shuffle=True, seed=1,
                                  random_resized_crop=(crop, (0.35, 1.0), (3 / 4, 4 / 3)),
                                  mirror=True, **common)
    val = libdata.torch.Dataset(val_h5, batch_size=64, crop=crop, **common)
    train_loader = DataLoader(train, batch_size=None, num_workers=args.workers,
                              persistent_workers=args.workers > 0)
    val_loader = DataLoader(val, batch_size=None, num_workers=0)

    net = model()
    opt = torch.optim.AdamW(net.parameters(), lr=args.lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.epochs)
    loss_fn = nn.CrossEntropyLoss()
    t0 = time.perf_counter()
    acc = 0.0
    for epoch in range(args.epochs):
        train.set_epoch(epoch)  # a new permutation and new crops each epoch
        seen, loss_sum = 0, 0.0
        for x, y in train_loader:
            loss = loss_fn(net(rotate_flip(x)), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            seen += len(y)
            loss_sum += float(loss) * len(y)
        sched.step()
        acc = evaluate(net, val_loader)
        elapsed = time.perf_counter() - t0
        print(f"epoch {epoch + 1:3d}: {seen} samples, loss {loss_sum / max(seen, 1):.3f}, "
              f"val accuracy {acc:.1%}  ({elapsed:.0f} s)")
        sys.stdout.flush()
        if elapsed > args.time_limit:
            print(f"time limit of {args.time_limit:.0f} s reached")
            break
    print(f"final validation accuracy: {acc:.1%} on 32 images (chance: 25%)")


if __name__ == "__main__":
    main()
