"""The baselines of the segmentation data for samples/caffe/run_seg.sh.

Usage: make_seg_data.py SEG.h5 [CROP]

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
"""
import math
import sys

import h5py
import numpy as np

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
