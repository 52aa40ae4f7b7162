#!/usr/bin/python3
"""What a dataset holds, read with h5py, python-lmdb + protobuf, json and PIL (not libdata),
printed as one line in the form tests/unit/test_dataset_stat.c prints ld_dataset_stat()'s
struct, so that the two can be compared as strings.

Usage: dataset_stat_ref.py PATH   (an HDF5 file, a --split .txt list, or an LMDB directory)

  format=hdf5|lmdb ours=0|1 files=N samples=N encoded=0|1 encoding=NAME|- quality=Q
  dtype=u8|f32 label=i32|f32 shape=CxHxW first=0|1 order=BGR|RGB|- resize=MODE:WxH|-
  classes=HEX,HEX,...|-

Class names are printed as the hex of their bytes (as the folder names were on disk).
`order` is the channel order libdata's reader delivers by default, by the rules reader.h
documents: raw samples in their recorded order; encoded images in the order the dataset was
made for (BGR unless it records RGB); nothing for other than 3 channels or an unrecorded order.
"""
import io
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def text(v):
    if v is None:
        return ""
    if isinstance(v, bytes):
        return v.decode("utf-8", "surrogateescape")
    if isinstance(v, np.ndarray):
        return text(v.item())
    return str(v)


def hexnames(names):
    if not names:
        return "-"
    return ",".join((n if isinstance(n, bytes) else n.encode("utf-8", "surrogateescape")).hex()
                    for n in names)


def line(**f):
    keys = ["format", "ours", "files", "samples", "encoded", "encoding", "quality", "dtype",
            "label", "shape", "first", "order", "resize", "classes"]
    return " ".join(f"{k}={f[k]}" for k in keys)


def resize_of(mode, w, h):
    return f"{mode}:{w}x{h}" if mode in ("squash", "crop", "pad", "max") and (w or h) else "-"


def h5_facts(path, files=1, samples=None):
    import h5py
    with h5py.File(path, "r") as f:
        a = f.attrs
        ours = text(a.get("format")) == "libdata"
        encoded = "encoded" in f and "offsets" in f and "data" not in f
        n = len(f["label"]) if samples is None else samples
        label = "f32" if f["label"].dtype.kind == "f" else "i32"
        if encoded:
            shapes = f["shape"][:]
            c = int(shapes[0][0])
            same = (shapes == shapes[0]).all()
            h, w = (int(shapes[0][1]), int(shapes[0][2])) if same else (0, 0)
            dtype = "u8"
            made = text(a.get("channel_order"))
            order = ("RGB" if made == "RGB" else "BGR") if c == 3 else "-"
        else:
            c, h, w = (int(x) for x in f["data"].shape[1:4])
            dtype = "f32" if f["data"].dtype == np.float32 else "u8"
            stored = text(a.get("channel_order")) if ours else ""
            order = stored if c == 3 and stored in ("BGR", "RGB") else "-"
        enc = text(a.get("encoding")) if ours and encoded else ""
        names = [n if isinstance(n, bytes) else n.encode("utf-8", "surrogateescape")
                 for n in a["class_names"]] if ours and "class_names" in a else []
        return line(format="hdf5", ours=int(ours), files=files, samples=n, encoded=int(encoded),
                    encoding=enc or "-", quality=int(a.get("quality", 0)) if ours else 0,
                    dtype=dtype, label=label, shape=f"{c}x{h}x{w}", first=0, order=order,
                    resize=resize_of(text(a.get("resize_mode")), int(a.get("resize_w", 0)),
                                     int(a.get("resize_h", 0))) if ours else "-",
                    classes=hexnames(names))


def list_facts(path):
    import h5py
    folder = os.path.dirname(path)
    parts = []
    with open(path) as f:
        for raw in f:
            entry = raw.rstrip("\r\n ")
            if entry and not entry.startswith("#"):
                parts.append(entry if os.path.isabs(entry) else os.path.join(folder, entry))
    total = 0
    for p in parts:
        with h5py.File(p, "r") as f:
            total += len(f["label"])
    return h5_facts(parts[0], files=len(parts), samples=total)


def lmdb_facts(path):
    import lmdb
    from PIL import Image
    from lmdb_caffe_pb import Datum
    side = None
    if os.path.exists(os.path.join(path, "libdata.json")):
        with open(os.path.join(path, "libdata.json"), encoding="utf-8",
                  errors="surrogateescape") as f:
            side = json.load(f)
    env = lmdb.open(path, readonly=True, lock=False)
    n = env.stat()["entries"]
    with env.begin() as txn:
        d = Datum()
        # the first record by iteration: tests/lmdb_tools/lmdb.py (the 32-bit suite's stand-in
        # for python-lmdb, which cannot read a 32-bit LMDB) has no Cursor.first()
        first_value = next(iter(txn.cursor()))[1]
        d.ParseFromString(first_value)
    env.close()
    ours = bool(side) and side.get("format") == "libdata-lmdb"
    first = 0
    if not d.encoded:
        c, h, w = d.channels, d.height, d.width
        dtype = "u8" if d.data else "f32"
        stored = side.get("channel_order") if ours else "BGR"  # Caffe stores BGR
        order = stored if c == 3 and stored in ("BGR", "RGB") else "-"
    else:
        dtype = "u8"
        if ours and side.get("height") and side.get("width"):
            c, h, w = side["channels"], side["height"], side["width"]
        elif d.channels and d.height and d.width:
            c, h, w = d.channels, d.height, d.width
            first = 1
        else:
            im = Image.open(io.BytesIO(d.data))
            c, (w, h) = (1 if im.mode in ("L", "LA", "I", "I;16") else 3), im.size
            first = 1
        if ours and side.get("channels"):
            c = side["channels"]
        made = side.get("channel_order") if ours else "BGR"
        order = ("RGB" if made == "RGB" else "BGR") if c == 3 else "-"
    names = [s.encode("utf-8", "surrogateescape") for s in side.get("class_names", [])] \
        if ours else []
    return line(format="lmdb", ours=int(ours), files=1, samples=n, encoded=int(d.encoded),
                encoding=(side.get("encoding") if ours and d.encoded else None) or "-",
                quality=side.get("quality", 0) if ours else 0, dtype=dtype, label="i32",
                shape=f"{c}x{h}x{w}", first=first, order=order,
                resize=resize_of(side.get("resize_mode"), side.get("resize_w", 0),
                                 side.get("resize_h", 0)) if ours else "-",
                classes=hexnames(names))


def main(path):
    if os.path.isdir(path):
        print(lmdb_facts(path))
    elif path.endswith(".txt"):
        print(list_facts(path))
    else:
        print(h5_facts(path))


if __name__ == "__main__":
    main(sys.argv[1])
