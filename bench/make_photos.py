#!/usr/bin/python3
"""Make a folder of real-photo JPEGs (about 500x375) for the benchmarks.

Usage: make_photos.py OUTDIR N [--classes K]

Photos are random crops/mirrors of the photographs that Debian's python3-skimage ships
(the same derivation as the test fixtures), saved as JPEG q90 into K class folders.
Deterministic: the same N gives the same files. Existing complete folders are reused.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data"))
import make_fixtures  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("n", type=int)
    ap.add_argument("--classes", type=int, default=4)
    a = ap.parse_args()
    stamp = os.path.join(a.outdir, f".complete-{a.n}-{a.classes}")
    if os.path.exists(stamp):
        return
    rng = np.random.default_rng(42)
    src = make_fixtures.source_photos()
    for i in range(a.n):
        d = os.path.join(a.outdir, f"class{i % a.classes}")
        os.makedirs(d, exist_ok=True)
        w, h = (500, 375) if i % 5 else (375, 500)
        im = make_fixtures.crop_variant(src[i % len(src)], w, h, rng)
        im.save(os.path.join(d, f"img{i:06d}.jpg"), quality=90)
    open(stamp, "w").close()


if __name__ == "__main__":
    main()
