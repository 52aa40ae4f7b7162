#!/usr/bin/python3
"""Quality cost of decoding JPEGs at a reduced DCT scale before the resize (issue 16 §1 asks for
DCT-domain scaling "whenever the output stays >= the target", within 0.1 dB of today's PSNR).

Usage: bench/dct_scale_quality.py SIZE FOLDER [COUNT]

For the first COUNT (default 60) JPEGs under FOLDER: the reference is Pillow's full decode +
LANCZOS resize to SIZE x SIZE (what tests/python/check_convert.py and bench/run compare
dataconv's output with); each scale M/8 decodes with libjpeg-turbo's own `djpeg -scale M/8`
(libjpeg-turbo-progs) and resizes that with the same LANCZOS. Prints mean and worst PSNR per
scale; scales that leave a side below SIZE are not counted for that image.
"""
import glob
import io
import os
import subprocess
import sys

import numpy as np
from PIL import Image


def psnr(a, b):
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return 99.0 if mse == 0 else 10 * np.log10(255.0 ** 2 / mse)


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    size, folder = int(sys.argv[1]), sys.argv[2]
    count = int(sys.argv[3]) if len(sys.argv) == 4 else 60
    files = sorted(glob.glob(os.path.join(folder, "**", "*.jp*g"), recursive=True))[:count]
    if not files:
        sys.exit(f"no JPEG files under {folder}")
    refs = [np.asarray(Image.open(f).convert("RGB").resize((size, size), Image.LANCZOS))
            for f in files]
    for m in (8, 7, 6, 5, 4):
        scores = []
        for f, ref in zip(files, refs):
            ppm = subprocess.run(["djpeg", "-scale", f"{m}/8", "-ppm", f], check=True,
                                 capture_output=True).stdout
            im = Image.open(io.BytesIO(ppm)).convert("RGB")
            if min(im.size) >= size:
                scores.append(psnr(np.asarray(im.resize((size, size), Image.LANCZOS)), ref))
        text = f"mean {np.mean(scores):6.2f} dB, worst {np.min(scores):6.2f} dB" if scores \
            else "no image stays at least the output size"
        print(f"scale {m}/8: {len(scores):3d} of {len(files)} images, {text}")


if __name__ == "__main__":
    main()
