#!/usr/bin/python3
"""Check an LMDB written by libdata's writer (tests/unit/test_lmdb.c) with python3-lmdb and
python3-protobuf, i.e. without any libdata code.

Usage: lmdb_check_written.py DB MODE N H W      MODE = raw | encoded

The C test wrote N records from a synthetic RGB image per record i (H x W):
    R = (x*3 + i) & 255,  G = (y*5) & 255,  B = (x + y + 2*i) & 255
converted to planar CHW in BGR order (what the converter hands the writer), key
"%08d_cls{i%3}/img_{i}.png", label i % 5. Encoded mode stores bytes
b"\xff\xd8" + bytes((i + j) & 255 for j in range(100 + i)) with shape 3 x H x W.

Checked: key order = cursor order = expected keys, labels, pixels equal OpenCV's
BGR conversion transposed to CHW, `encoded` explicitly present, our bytes equal protobuf's
serialization of the parsed message, mdb_stat's entry count, and that the sidecar
libdata.json is valid JSON with the class names.
"""
import json
import os
import subprocess
import sys

import cv2
import lmdb
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lmdb_caffe_pb import Datum  # noqa: E402


def expected_chw(i, h, w):
    y, x = np.mgrid[0:h, 0:w]
    rgb = np.stack([(x * 3 + i) & 255, (y * 5) & 255, (x + y + 2 * i) & 255], -1).astype(np.uint8)
    return cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR).transpose(2, 0, 1)


def main(db, mode, n, h, w):
    n, h, w = int(n), int(h), int(w)
    keys = [f"{i:08d}_cls{i % 3}/img_{i}.png" for i in range(n)]
    env = lmdb.open(db, readonly=True, lock=False)
    got = []
    with env.begin() as txn:
        for i, (k, v) in enumerate(txn.cursor()):
            k = k.decode()
            got.append(k)
            d = Datum()
            d.ParseFromString(v)
            assert d.HasField("encoded"), f"{k}: encoded not explicitly present"
            assert d.encoded == (mode == "encoded"), f"{k}: encoded={d.encoded}"
            assert d.label == i % 5, f"{k}: label {d.label}"
            assert d.SerializeToString() == v, f"{k}: bytes differ from protobuf's serialization"
            assert (d.channels, d.height, d.width) == (3, h, w), f"{k}: shape"
            if mode == "encoded":
                want = b"\xff\xd8" + bytes((i + j) & 255 for j in range(100 + i))
                assert d.data == want, f"{k}: encoded bytes differ"
            else:
                arr = np.frombuffer(d.data, np.uint8).reshape(3, h, w)
                assert np.array_equal(arr, expected_chw(i, h, w)), f"{k}: pixels differ"
    assert got == keys, f"keys {got[:2]}... != {keys[:2]}..."
    out = subprocess.run(["mdb_stat", db], check=True, capture_output=True, text=True).stdout
    entries = [int(l.split()[1]) for l in out.splitlines() if l.strip().startswith("Entries:")]
    assert entries == [n], f"mdb_stat entries {entries} != {n}"
    with open(os.path.join(db, "libdata.json")) as f:
        meta = json.load(f)
    assert meta["class_names"] == ["cls0", "cls1", "cls2"], meta
    assert meta["entries"] == n and meta["storage"] == mode, meta
    print("ok", n)


if __name__ == "__main__":
    main(*sys.argv[1:6])
