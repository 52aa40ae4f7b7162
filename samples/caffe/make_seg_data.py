"""The baselines of the segmentation data for samples/caffe/run_seg.sh, and its alignment set.

Usage: make_seg_data.py SEG.h5 [CROP]
       make_seg_data.py --align LIST MASKS_DIR OUT_DIR [SIZE]

SEG.h5 is dataconv's output for a list without class labels and --masks: /label uint8
(N, 1, H, W) class indices, 255 = ignore (the padding of --mode pad). Prints, over the pixels
that are not 255:
  classes     each class's share of the pixels
  baseline full H W LOSS ACC   the SoftmaxWithLoss { ignore_label: 255 } of the best constant
              prediction (each pixel predicted as the class frequencies: their entropy, natural
              log, as Caffe's loss) and the pixel accuracy of always predicting the most
              frequent class, on the whole masks (HDF5Data, Data layers)
  baseline crop C LOSS ACC     the same under a uniformly random C x C crop of each mask (what
              the LibData layer's crop_size: C gives in TRAIN; a mirror changes no count):
              each pixel weighted by the number of crop positions that contain it
A net that ignored its images, or got masks out of step with them, could not get below these.
The LMDB pair written from the same list holds the same masks (in another order), so the
numbers hold for it too.

--align writes a set whose pictures are their masks: for each line REL of LIST, the mask
MASKS_DIR/REL (extension .png) resized to SIZE x SIZE (default 48) with nearest sampling goes to
OUT_DIR/masks/REL.png (gray, the class indices) and, times 50 in all three channels, to
OUT_DIR/images/REL.png (lossless), listed in OUT_DIR/align.txt. Converted without --resize,
every pixel of channel 0 is 50 x its mask's value, under any crop and mirror that keeps the two
together: seg_align_train.prototxt checks that in Caffe's TRAIN phase.
"""
import math
import os
import sys

import h5py
import numpy as np


def align(listfile, masks_dir, out, size):
    from PIL import Image

    names = [line.strip() for line in open(listfile, encoding="utf-8") if line.strip()]
    with open(f"{out}/align.txt", "w", encoding="utf-8") as lst:
        for rel in names:
            stem = os.path.splitext(rel)[0]
            m = Image.open(f"{masks_dir}/{stem}.png")
            if m.mode not in ("P", "L"):
                sys.exit(f"{masks_dir}/{stem}.png: mode {m.mode}, expected palette or gray")
            a = np.asarray(m.resize((size, size), Image.NEAREST), np.uint8)
            if a.max() * 50 > 255:
                sys.exit(f"{masks_dir}/{stem}.png: class {a.max()} does not fit 50 x class")
            for sub, img in (("masks", Image.fromarray(a, "L")),
                             ("images", Image.fromarray(np.repeat(a[..., None] * 50, 3, 2),
                                                        "RGB"))):
                os.makedirs(os.path.dirname(f"{out}/{sub}/{stem}.png"), exist_ok=True)
                img.save(f"{out}/{sub}/{stem}.png")
            lst.write(f"{stem}.png\n")
    print(f"align: {len(names)} pictures of their {size}x{size} masks in {out}")


if sys.argv[1] == "--align":
    align(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]) if len(sys.argv) > 5 else 48)
    sys.exit(0)
path = sys.argv[1]
crop = int(sys.argv[2]) if len(sys.argv) > 2 else 0
with h5py.File(path, "r") as f:
    masks = f["label"][()]
if masks.ndim != 4 or masks.shape[1] != 1 or masks.dtype != np.uint8:
    sys.exit(f"{path}: /label is {masks.shape} {masks.dtype}, expected uint8 (N, 1, H, W)")
n, _, h, w = masks.shape
classes = int(masks[masks != 255].max()) + 1


def baseline(weights):
    """Entropy of the weighted class frequencies and the majority class's share."""
    counts = np.array([(weights * (masks == k)).sum() for k in range(classes)], np.float64)
    p = counts / counts.sum()
    return -sum(q * math.log(q) for q in p if q > 0), p.max(), p


loss, acc, p = baseline(np.ones((1, 1, h, w)))
print(f"samples {n} masks {h}x{w} classes {classes} ignored "
      f"{(masks == 255).mean():.4f} of the pixels")
print("classes " + " ".join(f"{k}:{q:.4f}" for k, q in enumerate(p)))
print(f"baseline full {h} {w} {loss:.5f} {acc:.4f}")
if crop:
    if crop > h or crop > w:
        sys.exit(f"crop {crop} is larger than the masks ({h}x{w})")

    def cover(size):  # how many of the size - crop + 1 offsets cover each position
        i = np.arange(size)
        return np.minimum(i, size - crop) - np.maximum(0, i - crop + 1) + 1

    loss, acc, _ = baseline(np.outer(cover(h), cover(w))[None, None])
    print(f"baseline crop {crop} {loss:.5f} {acc:.4f}")
