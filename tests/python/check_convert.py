#!/usr/bin/python3
"""Check a dataconv HDF5 output with tools independent of libdata (h5py, Pillow).

  check_convert.py raw  OUT.h5 TREE     raw 64x48 squash, BGR, CHW: pixels near Pillow's
                                         decode + LANCZOS resize, labels from sorted class folders
  check_convert.py jpeg OUT.h5 TREE     JPEG q90 64x64 storage: decoded bytes near Pillow's
  check_convert.py list OUT.h5 LIST     labels and file names in list order
Exits non-zero with a message on the first mismatch.
"""
import io
import os
import sys

import h5py
import numpy as np
from PIL import Image, ImageOps


def tree_items(root):
    classes = sorted(d for d in os.listdir(root)
                     if os.path.isdir(os.path.join(root, d)) and not d.startswith("."))
    items = []
    for label, cls in enumerate(classes):
        for dirpath, dirnames, files in os.walk(os.path.join(root, cls)):
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            for f in files:
                if f.startswith(".") or not f.lower().endswith((".jpg", ".jpeg", ".png")):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, f), root)
                items.append((rel, label))
    items.sort(key=lambda t: t[0].encode())
    return classes, items


def psnr(a, b):
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return 99.0 if mse == 0 else 10 * np.log10(255.0 ** 2 / mse)


def reference(path, w, h):
    im = ImageOps.exif_transpose(Image.open(path)).convert("RGB")
    return np.asarray(im.resize((w, h), Image.LANCZOS))


def fail(msg):
    sys.exit("check_convert: " + msg)


def main():
    mode, out, src = sys.argv[1:4]
    f = h5py.File(out, "r")
    if f.attrs["format"] not in ("libdata", b"libdata"):
        fail(f"format attribute is {f.attrs['format']!r}")
    names = [n.decode() if isinstance(n, bytes) else n for n in f["filename"][:]]
    labels = f["label"][:]
    if mode == "list":
        lines = [ln.rsplit(" ", 1) for ln in open(src).read().splitlines() if ln.strip()]
        if names != [p for p, _ in lines]:
            fail(f"file names {names} != list {[p for p, _ in lines]}")
        if list(labels) != [int(l) for _, l in lines]:
            fail(f"labels {list(labels)} != list")
        return
    classes, items = tree_items(src)
    if names != [r for r, _ in items]:
        fail(f"file names {names} != {[r for r, _ in items]}")
    if list(labels) != [l for _, l in items]:
        fail(f"labels {list(labels)} != {[l for _, l in items]}")
    got_classes = [c.decode() if isinstance(c, bytes) else c for c in f.attrs["class_names"]]
    if got_classes != classes:
        fail(f"class_names {got_classes} != {classes}")
    scores = []
    if mode == "raw":
        data = f["data"]
        if data.shape != (len(items), 3, 48, 64) or data.dtype != np.uint8:
            fail(f"data is {data.shape} {data.dtype}")
        if data.compression is not None:
            fail("raw data must be unfiltered")
        for i, (rel, _) in enumerate(items):
            ref = reference(os.path.join(src, rel), 64, 48)
            got = data[i].transpose(1, 2, 0)[:, :, ::-1]  # CHW BGR -> HWC RGB
            scores.append(psnr(got, ref))
    elif mode == "jpeg":
        enc, off = f["encoded"], f["offsets"][:]
        if len(off) != len(items) + 1:
            fail(f"offsets has {len(off)} entries")
        for i, (rel, _) in enumerate(items):
            blob = enc[off[i]:off[i + 1]].tobytes()
            got = np.asarray(Image.open(io.BytesIO(blob)).convert("RGB"))
            ref = reference(os.path.join(src, rel), 64, 64)
            if got.shape != ref.shape:
                fail(f"{rel}: decoded shape {got.shape}")
            scores.append(psnr(got, ref))
    worst = min(scores)
    print(f"check_convert {mode}: {len(items)} samples, PSNR vs Pillow mean {np.mean(scores):.1f} "
          f"dB, worst {worst:.1f} dB")
    if worst < 28:
        fail(f"a sample differs too much from Pillow's resize ({worst:.1f} dB)")


if __name__ == "__main__":
    main()
