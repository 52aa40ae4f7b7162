#!/usr/bin/python3
"""Compare a binaryproto mean written by libdata with numpy's mean of the same LMDB.

Usage: lmdb_check_mean.py DB MEAN.binaryproto
Records are read with python3-lmdb + protobuf; encoded ones are decoded with OpenCV
(BGR, as Caffe's DecodeDatumNative). The file must parse as Caffe's BlobProto with num=1 and
the data equal numpy's float64 mean within 1e-4.
"""
import os
import sys

import cv2
import lmdb
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lmdb_caffe_pb import BlobProto, Datum  # noqa: E402


def main(db, mean_path):
    env = lmdb.open(db, readonly=True, lock=False)
    total, n = None, 0
    with env.begin() as txn:
        for _, v in txn.cursor():
            d = Datum()
            d.ParseFromString(v)
            if d.encoded:
                img = cv2.imdecode(np.frombuffer(d.data, np.uint8), cv2.IMREAD_COLOR)
                arr = img.transpose(2, 0, 1).astype(np.float64)
            elif not d.data:
                arr = np.array(d.float_data, np.float64).reshape(d.channels, d.height, d.width)
            else:
                arr = np.frombuffer(d.data, np.uint8).reshape(d.channels, d.height, d.width)
                arr = arr.astype(np.float64)
            total = arr if total is None else total + arr
            n += 1
    want = total / n
    b = BlobProto()
    with open(mean_path, "rb") as f:
        b.ParseFromString(f.read())
    assert b.num == 1, b.num
    assert (b.channels, b.height, b.width) == want.shape, ((b.channels, b.height, b.width),
                                                           want.shape)
    got = np.array(b.data, np.float64).reshape(want.shape)
    err = np.abs(got - want).max()
    assert err <= 1e-4, f"max abs difference {err}"
    print("ok", n, "max abs err", err, "channel means", want.mean(axis=(1, 2)))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
