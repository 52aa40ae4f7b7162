#!/usr/bin/python3
"""Make LMDB databases the way Caffe's convert_imageset does (python3-lmdb + protobuf), and
deliberately malformed ones, for tests/unit/test_lmdb.c.

Usage: lmdb_make_caffe_db.py DB KIND
  raw      ids 0..9 without 2 and 6 (convert_imageset skips unreadable files but keeps the
           line number in the key): keys "%08d_dir/img{id}.jpg", 12x10 images, BGR CHW as
           CVMatToDatum stores them, label id % 4, encoded=false.
  encoded  the same ids as PNG bytes from cv2.imencode, encoded=true, channels/height/width
           not set (as convert_imageset --encoded leaves them).
  float    4 records 2x3x2 in float_data (non-packed, as Caffe writes it), value
           (i*12 + j) * 0.25 - 1, label i.
  tiny     5000 records 1x1x1, keys "k%06d" (no numeric prefix), pixel = label = i % 251.
  bad-truncvarint | bad-lenpast | bad-shape | bad-hugedims | bad-wiretype [,plain]
           3 records; "00000001_bad.jpg" is malformed, the others are valid 3x2x2. With
           ",plain" the keys carry no number: "a_good.jpg", "b_bad.jpg", "c_good.jpg".
  layouts  raw 3x4x5 records whose bytes are laid out in ways protobuf accepts but Caffe's
           serializer never writes (label before the pixels, an unknown field, a second
           `data` field that overrides the first, no label, a repeated shape field), among
           records laid out as Caffe does; LABEL_HEAD=1 puts the first record's label before
           its pixels. DB/expected.bin holds what protobuf itself parses from each record:
           int32 label (little endian), then the pixels.
  overwrite
           DB exists (raw records keyed "%08d_..."): put every key again with another
           image of the same shape (the synthetic pattern of id + 100 + round), in three
           write transactions, so that LMDB frees the old pages and reuses them unless a
           reader's snapshot holds them.
Images are the synthetic pattern of lmdb_check_written.py with i = id.

Usage: lmdb_make_caffe_db.py DB cis-MODE[,OPTION...] IMAGE...
  What Caffe 1.0's convert_imageset writes for the image files given (line i of its list is
  IMAGE i, label i % 5), with OpenCV, as its ReadImageToDatum does:
  cis-raw       raw BGR CHW bytes + channels/height/width + encoded=false (CVMatToDatum)
  cis-jpg       --encoded on .jpg files: the file bytes as they are, label, encoded=true;
                no channels/height/width (ReadFileToDatum)
  cis-png       --encoded --encode_type=png: cv2.imencode(".png") of the BGR image
  options: gray (--gray: read with IMREAD_GRAYSCALE; encoded: re-encoded with
           cv2.imencode(".jpg") as convert_imageset does when it resizes), resize=WxH
           (--resize_width/--resize_height: cv2.resize, INTER_LINEAR; encoded: re-encoded),
           keys=plain (keys are the file names, no "%08d_" prefix, as other tools write them;
           default "%08d_<name>"), reverse (insert in reverse order: the key order decides).
"""

import os
import sys

import cv2
import lmdb
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lmdb_caffe_pb import Datum  # noqa: E402


def bgr_hwc(i, h, w):
    y, x = np.mgrid[0:h, 0:w]
    rgb = np.stack([(x * 3 + i) & 255, (y * 5) & 255, (x + y + 2 * i) & 255], -1).astype(np.uint8)
    return cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR)


def raw_datum(img, label):
    d = Datum()
    d.channels, d.height, d.width = img.shape[2], img.shape[0], img.shape[1]
    d.encoded = False
    d.data = img.transpose(2, 0, 1).tobytes()
    d.label = label
    return d.SerializeToString()


def convert_imageset(db, spec, images):
    mode, *opts = spec.split(",")
    opts = dict(o.split("=", 1) if "=" in o else (o, "1") for o in opts)
    gray = "gray" in opts
    size = tuple(int(v) for v in opts["resize"].split("x")) if "resize" in opts else None
    env = lmdb.open(db, map_size=1 << 28)
    order = list(range(len(images)))
    if "reverse" in opts:
        order.reverse()
    with env.begin(write=True) as txn:
        for i in order:
            path = images[i]
            name = os.path.basename(path)
            img = cv2.imread(path, cv2.IMREAD_GRAYSCALE if gray else cv2.IMREAD_COLOR)
            if size:
                img = cv2.resize(img, size)
            d = Datum(label=i % 5)
            if mode == "cis-raw":
                chw = img[None] if img.ndim == 2 else img.transpose(2, 0, 1)
                d.channels, d.height, d.width = chw.shape
                d.data = chw.tobytes()
                d.encoded = False
            elif mode == "cis-jpg" and not size and (img.ndim == 3) != gray:
                d.data = open(path, "rb").read()  # ReadFileToDatum
                d.encoded = True
            elif mode in ("cis-jpg", "cis-png"):
                d.data = cv2.imencode(".png" if mode == "cis-png" else ".jpg", img)[1].tobytes()
                d.encoded = True
            else:
                sys.exit(f"unknown kind {mode}")
            key = name if opts.get("keys") == "plain" else f"{i:08d}_{name}"
            txn.put(key.encode(), d.SerializeToString())
    env.close()


def varint(v):
    out = b""
    while True:
        out += bytes([(v & 0x7F) | (0x80 if v > 0x7F else 0)])
        v >>= 7
        if not v:
            return out


def field(num, value):
    if isinstance(value, bytes):
        return varint(num << 3 | 2) + varint(len(value)) + value
    return varint(num << 3) + varint(value)


def layouts(db):
    c, h, w = 3, 4, 5
    px = [bytes((i * 7 + j) & 255 for j in range(c * h * w)) for i in range(8)]
    shape = field(1, c) + field(2, h) + field(3, w)
    label_head = os.environ.get("LABEL_HEAD") == "1"
    values = [
        shape + field(5, 3) + field(4, px[0]) if label_head else shape + field(4, px[0]) + field(5, 3),
        shape + field(4, px[1]) + field(5, 4),            # as Caffe writes it
        shape + field(5, 5) + field(4, px[2]),            # label before the pixels
        shape + field(4, px[3]) + field(5, 6) + field(99, 7),  # an unknown field
        shape + field(4, px[4]) + field(5, 7) + field(4, px[5]),  # the last `data` wins
        shape + field(4, px[6]),                          # no label: 0
        shape + field(4, px[7]) + field(5, 9) + field(1, c),  # the shape again
        shape + field(4, px[1]) + field(5, 3) + field(7, 0),  # encoded = false, said
    ]
    env = lmdb.open(db, map_size=1 << 26)
    expected = b""
    with env.begin(write=True) as txn:
        for i, v in enumerate(values):
            d = Datum()
            d.ParseFromString(v)
            assert d.channels * d.height * d.width == len(d.data) and not d.encoded
            expected += d.label.to_bytes(4, "little", signed=True) + d.data
            txn.put(f"{i:08d}_layout{i}".encode(), v)
    env.close()
    with open(os.path.join(db, "expected.bin"), "wb") as f:
        f.write(expected)


def overwrite(db):
    env = lmdb.open(db, map_size=1 << 28)
    for rnd in range(3):
        with env.begin(write=True) as txn:
            for key, value in list(txn.cursor()):
                d = Datum()
                d.ParseFromString(value)
                hwc = bgr_hwc(int(key[:8]) + 100 + rnd, d.height, d.width)
                txn.put(key, raw_datum(hwc, d.label))
    env.close()


def main(db, kind, *images):
    if kind.startswith("cis-"):
        return convert_imageset(db, kind, images)
    if kind == "overwrite":
        return overwrite(db)
    if kind == "layouts":
        return layouts(db)
    env = lmdb.open(db, map_size=1 << 26)
    with env.begin(write=True) as txn:
        if kind in ("raw", "encoded"):
            for i in [k for k in range(10) if k not in (2, 6)]:
                img = bgr_hwc(i, 12, 10)
                if kind == "raw":
                    v = raw_datum(img, i % 4)
                else:
                    d = Datum()
                    d.data = cv2.imencode(".png", img)[1].tobytes()
                    d.label = i % 4
                    d.encoded = True
                    v = d.SerializeToString()
                txn.put(f"{i:08d}_dir/img{i}.jpg".encode(), v)
        elif kind == "float":
            for i in range(4):
                vals = [(i * 12 + j) * 0.25 - 1.0 for j in range(12)]
                d = Datum(channels=2, height=3, width=2, float_data=vals, label=i)
                txn.put(f"{i:08d}_f{i}".encode(), d.SerializeToString())
        elif kind == "tiny":
            for i in range(5000):
                d = Datum(channels=1, height=1, width=1, data=bytes([i % 251]), label=i % 251,
                          encoded=False)
                txn.put(f"k{i:06d}".encode(), d.SerializeToString())
        elif kind.startswith("bad-"):
            kind, _, plain = kind.partition(",")
            keys = ["a_good.jpg", "b_bad.jpg", "c_good.jpg"] if plain else [
                "00000000_good.jpg", "00000001_bad.jpg", "00000002_good.jpg"]
            good = raw_datum(bgr_hwc(0, 2, 2), 1)
            bad = {
                "bad-truncvarint": b"\x08\x03\x10\x80",
                "bad-lenpast": b"\x08\x03\x10\x02\x18\x02\x22\x40" + bytes(12),
                "bad-shape": Datum(channels=3, height=2, width=2, data=bytes(11),
                                   encoded=False).SerializeToString(),
                "bad-hugedims": Datum(channels=3, height=1 << 30, width=1 << 30, data=bytes(12),
                                      encoded=False).SerializeToString(),
                "bad-wiretype": b"\x0d\x03\x00\x00\x00" + good,
            }[kind]
            for key, value in zip(keys, [good, bad, good]):
                txn.put(key.encode(), value)
        else:
            sys.exit(f"unknown kind {kind}")
    env.close()


if __name__ == "__main__":
    main(*sys.argv[1:])
