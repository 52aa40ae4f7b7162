"""Make a small, learnable label-vector dataset for samples/caffe/run_labels.sh.

Usage: make_label_data.py IMAGES_DIR OUT_DIR [COUNT]

Writes OUT_DIR/img/NNNN.png (32x32 RGB: a random crop of a sample image, maybe mirrored, each
colour channel scaled by its own random gain, so that the colour means spread over the range
even for the grey sample images), and two list files for dataconv:
  regression.txt  "img/NNNN.png r g b": the image's mean of each channel / 255 (K = 3)
  multilabel.txt  "img/NNNN.png a b c": 1 where that channel's mean is above the median of
                  that channel over the dataset, else 0 (three balanced binary labels)
and prints the loss of the best constant prediction for each, the level a net that ignored its
images (or got labels out of step with them) could not beat:
  regression: EuclideanLoss of predicting the per-channel mean = sum_k var_k / 2
  multilabel: SigmoidCrossEntropyLoss of predicting the label frequency = 3 * ln 2 (balanced)
The targets are computed from the 32x32 pixels that are written (PNG, lossless) and that the
net sees, so they are exact. Seeded: the same files every run.
"""
import glob
import math
import os
import random
import sys

import numpy as np
from PIL import Image

images, out = sys.argv[1], sys.argv[2]
count = int(sys.argv[3]) if len(sys.argv) > 3 else 320
rng = random.Random(1)
srcs = sorted(glob.glob(f"{images}/*/*"))
if not srcs:
    sys.exit(f"no images under {images}")
os.makedirs(f"{out}/img", exist_ok=True)
names, means = [], []
for i in range(count):
    im = Image.open(srcs[i % len(srcs)]).convert("RGB")
    w, h = im.size
    cw, ch = int(w * rng.uniform(0.6, 1.0)), int(h * rng.uniform(0.6, 1.0))
    x, y = rng.randint(0, w - cw), rng.randint(0, h - ch)
    im = im.crop((x, y, x + cw, y + ch)).resize((32, 32), Image.BILINEAR)
    if rng.random() < 0.5:
        im = im.transpose(Image.FLIP_LEFT_RIGHT)
    gain = np.array([rng.uniform(0.15, 1.0) for _ in range(3)], np.float32)
    a = np.clip(np.asarray(im, np.float32) * gain + 0.5, 0, 255).astype(np.uint8)
    name = f"img/{i:04d}.png"
    Image.fromarray(a, "RGB").save(f"{out}/{name}")
    names.append(name)
    means.append(a.reshape(-1, 3).mean(0) / 255.0)
means = np.array(means, np.float64)
median = np.median(means, 0)
binary = (means > median).astype(int)
with open(f"{out}/regression.txt", "w") as f:
    for n, m in zip(names, means):
        f.write(f"{n} {m[0]:.6f} {m[1]:.6f} {m[2]:.6f}\n")
with open(f"{out}/multilabel.txt", "w") as f:
    for n, b in zip(names, binary):
        f.write(f"{n} {b[0]} {b[1]} {b[2]}\n")
p = binary.mean(0)
xent = -sum(q * math.log(q) + (1 - q) * math.log(1 - q) for q in p)
print(f"baseline regression {means.var(0).sum() / 2:.6f}")
print(f"baseline multilabel {xent:.6f}")
