#!/usr/bin/python3
"""Check an LMDB made by `dataconv` against its source folder with tools that are not ours
(python3-lmdb, python3-protobuf, OpenCV), for CLI tests and by hand.

Usage:
  lmdb_check_dataconv.py DB SRC [--list LIST] [--resize WxH] [--gray] [--encoded]
                                [--tol T] [--min-records N]

  SRC      the input folder (folder mode) or the root of the list's paths (--list)
  --list   a Caffe "relative/path label" list file (labels from it, else class folders)
  --resize the --resize given to dataconv (pixels then compared to OpenCV's INTER_AREA
           resize by mean absolute difference, at most max(--tol, 8): a sanity check that
           catches swapped channels, transposes and wrong crops (differences of 20+), not a
           resampler comparison)
  --gray   1-channel output
  --encoded  records must hold the original file bytes (dataconv --encoded, no resize)
  --tol    raw, no resize: largest allowed per-pixel difference from cv2.imread (default 0:
           OpenCV and libdata both decode with libjpeg-turbo/libpng)
  --min-records  fail when fewer records were written (skipped files are allowed)

Checked: every key is "%08d_<rel>" with consecutive numbers in key order; the relative paths
appear in the expected order (sorted by path; list order with --list) as a subsequence
(bad files may be skipped); labels; Datum fields (`encoded` explicitly present); pixels in
BGR CHW order against cv2.imread (which also applies EXIF orientation); the entry count from
mdb_stat; the sidecar's class names in folder mode.
"""
import argparse
import json
import os
import subprocess
import sys

import cv2
import lmdb
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lmdb_caffe_pb import Datum  # noqa: E402

EXTS = (".jpg", ".jpeg", ".png")


def tree_items(src):
    """Folder mode as source.h defines it: class folders sorted bytewise, images found
    recursively (dot names ignored), the whole list sorted by relative path."""
    classes = sorted((d for d in os.listdir(src) if not d.startswith(".")
                      and os.path.isdir(os.path.join(src, d))), key=os.fsencode)
    items = []
    for label, c in enumerate(classes):
        for dirpath, dirs, files in os.walk(os.path.join(src, c), followlinks=True):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            for f in files:
                if not f.startswith(".") and f.lower().endswith(EXTS):
                    items.append((os.path.relpath(os.path.join(dirpath, f), src), label))
    items.sort(key=lambda t: os.fsencode(t[0]))
    return items, classes


def list_items(path):
    items = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\r\n")
            if line.strip():
                rel, label = line.rsplit(" ", 1)
                items.append((rel, int(label)))
    return items


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("db")
    ap.add_argument("src")
    ap.add_argument("--list")
    ap.add_argument("--resize")
    ap.add_argument("--gray", action="store_true")
    ap.add_argument("--encoded", action="store_true")
    ap.add_argument("--tol", type=float, default=0)
    ap.add_argument("--min-records", type=int, default=1)
    a = ap.parse_args()

    if a.list:
        items, classes = list_items(a.list), None
    else:
        items, classes = tree_items(a.src)
    order = {rel: (k, label) for k, (rel, label) in enumerate(items)}
    size = tuple(int(v) for v in a.resize.lower().split("x")) if a.resize else None
    if size and len(size) == 1:
        size = (size[0], size[0])

    env = lmdb.open(a.db, readonly=True, lock=False)
    n, last, worst = 0, -1, 0.0
    with env.begin() as txn:
        for i, (k, v) in enumerate(txn.cursor()):
            key = k.decode("utf-8")
            num, rel = key.split("_", 1)
            assert num == f"{i:08d}", f"key {key}: expected number {i:08d}"
            assert rel in order, f"key {key}: {rel} is not an input"
            pos, label = order[rel]
            assert pos > last, f"key {key}: out of input order"
            last = pos
            d = Datum()
            d.ParseFromString(v)
            assert d.HasField("encoded"), f"{key}: encoded not explicitly present"
            assert d.label == label, f"{key}: label {d.label}, expected {label}"
            path = os.path.join(a.src, rel)
            if a.encoded:
                assert d.encoded, f"{key}: not encoded"
                if not size:
                    with open(path, "rb") as f:
                        assert d.data == f.read(), f"{key}: bytes differ from {path}"
            else:
                assert not d.encoded, f"{key}: encoded"
                c = 1 if a.gray else 3
                assert d.channels == c, f"{key}: channels {d.channels}"
                got = np.frombuffer(d.data, np.uint8).reshape(c, d.height, d.width)
                img = cv2.imread(path, cv2.IMREAD_GRAYSCALE if a.gray else cv2.IMREAD_COLOR)
                if size:
                    assert (d.width, d.height) == size, f"{key}: {d.width}x{d.height}"
                    img = cv2.resize(img, size, interpolation=cv2.INTER_AREA)
                want = img.reshape(img.shape[0], img.shape[1], -1).transpose(2, 0, 1)
                assert got.shape == want.shape, f"{key}: shape {got.shape} != {want.shape}"
                diff = np.abs(got.astype(np.int16) - want.astype(np.int16))
                if size:
                    worst = max(worst, float(diff.mean()))
                    assert diff.mean() <= max(a.tol, 8.0), f"{key}: mean diff {diff.mean()}"
                else:
                    worst = max(worst, float(diff.max()))
                    assert diff.max() <= a.tol, f"{key}: max pixel diff {diff.max()} vs OpenCV"
            n += 1
    assert n >= a.min_records, f"only {n} records"
    out = subprocess.run(["mdb_stat", a.db], check=True, capture_output=True, text=True).stdout
    assert f"Entries: {n}" in out, out
    side = os.path.join(a.db, "libdata.json")
    if classes is not None and os.path.exists(side):
        with open(side) as f:
            meta = json.load(f)
        assert meta["class_names"] == classes, (meta["class_names"], classes)
        assert meta["entries"] == n, meta["entries"]
    print(f"ok: {n} of {len(items)} inputs, worst pixel difference {worst:g}")


if __name__ == "__main__":
    main()
