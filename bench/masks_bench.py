#!/usr/bin/python3
"""Segmentation masks (issue 28): the cost of carrying a mask with every image, side by side.

    bench/masks_bench.py [--build DIR] [--work DIR] [--n 2000] [--reps 3]

Takes N real-photo JPEGs (bench/suite_photos.py, ~500x375, made once into WORK/photos<N>) and
gives each a palette PNG mask of its size (4 classes from the brightness, a 255 "ignore" band).
Then, in one run:
  convert: the same list --resize 224 --mode pad, without and with --masks, at -j1 and -j2,
           interleaved REPS times: pairs/s with masks over images/s without (goal >= 0.6);
  read:    `dataconv bench` (shuffled, batch 64, 3 epochs, crop 192 + mirror: the masks get
           the crop and the flip too) of both files, interleaved REPS times: bytes/s of image +
           mask batches over bytes/s of image-only batches (goal >= 0.8), and samples/s.
Needs python3-numpy, python3-pil. bench/run (section "masks") runs it too.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PALETTE = [0, 0, 0, 128, 0, 0, 0, 128, 0, 128, 128, 0] + [0] * 756


def make(photos, work):
    """Masks for every JPEG below PHOTOS into WORK/masks (same relative paths, .png) and the
    list WORK/list.txt; kept from an earlier run. Returns the list's path."""
    rels = sorted(os.path.relpath(os.path.join(d, f), photos)
                  for d, _, fs in os.walk(photos) for f in fs if f.endswith(".jpg"))
    for rel in rels:
        out = os.path.join(work, "masks", os.path.splitext(rel)[0] + ".png")
        if os.path.exists(out):
            continue
        os.makedirs(os.path.dirname(out), exist_ok=True)
        g = np.asarray(Image.open(os.path.join(photos, rel)).convert("L"))
        m = (g // 64).astype(np.uint8)
        m[:, : m.shape[1] // 10] = 255
        p = Image.fromarray(m, "P")
        p.putpalette(PALETTE)
        p.save(out)
    lst = os.path.join(work, "list.txt")
    with open(lst, "w") as f:
        f.writelines(r + "\n" for r in rels)
    return lst


def convert(dataconv, lst, photos, out, threads, masks):
    args = [dataconv, "-q", "--list", lst, "--root", photos, out, "--resize", "224", "--mode",
            "pad", "-j", str(threads)] + (["--masks", masks] if masks else [])
    t0 = time.perf_counter()
    subprocess.run(args, check=True)
    return time.perf_counter() - t0


def read_rate(dataconv, path):
    """Samples/s of the best of 3 shuffled epochs (batch 64, crop 192 + mirror, 2 threads)."""
    p = subprocess.run([dataconv, "bench", path, "--batch", "64", "--shuffle", "--epochs", "3",
                        "--crop", "192", "--mirror", "-j", "2"],
                       check=True, capture_output=True, text=True)
    rates = [float(m) for m in re.findall(r"([0-9.]+) samples/s,", p.stdout + p.stderr)]
    if not rates:
        sys.exit(f"dataconv bench {path}: no rate in its output:\n{p.stdout}{p.stderr}")
    return max(rates)


def rng_text(v, fmt="{:,.0f}"):
    return f"{fmt.format(statistics.median(v))} ({fmt.format(min(v))}-{fmt.format(max(v))})"


def measure(dataconv, photos, work, reps, log=print):
    lst = make(photos, work)
    n = len(open(lst).read().split("\n")) - 1
    masks = os.path.join(work, "masks")
    img, seg = os.path.join(work, "img.h5"), os.path.join(work, "seg.h5")
    rows = []
    for j in (1, 2):
        a, b = [], []
        for _ in range(reps):  # interleaved, so that drift hits both alike
            a.append(n / convert(dataconv, lst, photos, img, j, None))
            b.append(n / convert(dataconv, lst, photos, seg, j, masks))
        row = dict(kind="convert", threads=j, n=n, images=a, pairs=b,
                   ratio=[y / x for x, y in zip(a, b)])
        rows.append(row)
        log(line(row))
    ri, rs = [], []
    for _ in range(reps):
        ri.append(read_rate(dataconv, img))
        rs.append(read_rate(dataconv, seg))
    px = 192 * 192
    row = dict(kind="read", threads=2, n=n, images=ri, pairs=rs,
               ratio=[(s * 4 * px) / (i * 3 * px) for i, s in zip(ri, rs)],
               sample_ratio=[s / i for i, s in zip(ri, rs)])
    rows.append(row)
    log(line(row))
    for p in (img, seg):
        os.remove(p)
    return rows


HEADER = ("| step | images only | image + mask | ratio (goal) |\n"
          "|---|---|---|---|")


def line(r):
    if r["kind"] == "convert":
        return (f"| convert {r['n']} photos to 224x224 pad, -j{r['threads']} "
                f"| {rng_text(r['images'])} img/s | {rng_text(r['pairs'])} pairs/s "
                f"| {rng_text(r['ratio'], '{:.2f}')} pairs/s over img/s (>= 0.6) |")
    return (f"| read: shuffled, batch 64, crop 192 + mirror, -j{r['threads']} "
            f"| {rng_text(r['images'])} samples/s | {rng_text(r['pairs'])} samples/s "
            f"| {rng_text(r['ratio'], '{:.2f}')} bytes/s (>= 0.8); "
            f"{rng_text(r['sample_ratio'], '{:.2f}')} samples/s |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", default="/tmp/ld_bench_masks")
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    dataconv = os.path.join(a.build, "dataconv")
    if not os.access(dataconv, os.X_OK):
        sys.exit(f"no dataconv in {a.build}")
    sys.path.insert(0, HERE)
    import suite_photos  # noqa: E402 (bench/)
    os.makedirs(a.work, exist_ok=True)
    photos = suite_photos.make(os.path.join(a.work, f"photos{a.n}"), a.n)
    print(f"masks: {a.n} photos in {photos}, load {os.getloadavg()[0]:.2f}", flush=True)
    print(HEADER, flush=True)
    measure(dataconv, photos, a.work, a.reps, log=lambda s: print(s, flush=True))
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
