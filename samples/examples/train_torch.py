#!/usr/bin/python3
"""Train a small CNN on the samples dataset through libdata's PyTorch adapter.

    PYTHONPATH=bindings/python LIBDATA_LIBRARY=build/libdata.so \
        /usr/bin/python3 samples/examples/train_torch.py [--epochs 30] [--workers 2]

samples/images (4 classes: circle, square, stripes, triangle) is converted once with
libdata.convert() at 64x64 from the Caffe list files samples/train.txt (128 images) and
samples/val.txt (32 images). Training reads random 56x56 crops with random mirroring, float32
scaled to [0, 1] with the per-channel mean removed, through libdata.torch.Dataset and a
DataLoader with worker processes; validation reads the center crops. Prints the validation
accuracy (chance is 25%).
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


def make(out_dir, name):
    out = os.path.join(out_dir, f"samples_{name}.h5")
    if not os.path.exists(out):
        s = libdata.convert(os.path.join(SAMPLES, "images"), out, resize=64,
                            list_file=os.path.join(SAMPLES, f"{name}.txt"))
        print(f"converted {name}: {s.converted} images ({s.skipped} skipped) -> {out}")
    return out


def model(classes=4):
    def block(cin, cout):
        return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False),
                             nn.BatchNorm2d(cout), nn.ReLU(inplace=True), nn.MaxPool2d(2))
    return nn.Sequential(block(3, 16), block(16, 32), block(32, 64), block(64, 64),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2),
                         nn.Linear(64, classes))


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
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--time-limit", type=float, default=120, help="seconds of training at most")
    ap.add_argument("--out", default=os.environ.get("TMPDIR", "/tmp"),
                    help="folder for the converted datasets")
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(max(1, os.cpu_count() or 1))

    train_h5, val_h5 = make(args.out, "train"), make(args.out, "val")
    common = dict(dtype="float32", mean=MEAN, scale=1 / 255, crop=56)
    train = libdata.torch.Dataset(train_h5, batch_size=args.batch, shuffle=True, seed=1,
                                  random_crop=True, mirror=True, **common)
    val = libdata.torch.Dataset(val_h5, batch_size=64, **common)
    train_loader = DataLoader(train, batch_size=None, num_workers=args.workers,
                              persistent_workers=args.workers > 0)
    val_loader = DataLoader(val, batch_size=None, num_workers=0)

    net = model()
    opt = torch.optim.AdamW(net.parameters(), lr=3e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.epochs)
    loss_fn = nn.CrossEntropyLoss()
    t0 = time.perf_counter()
    acc = 0.0
    for epoch in range(args.epochs):
        train.set_epoch(epoch)  # a new permutation and new crops each epoch
        seen, loss_sum = 0, 0.0
        for x, y in train_loader:
            loss = loss_fn(net(x), y)
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
