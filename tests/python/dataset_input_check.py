#!/usr/bin/python3
"""Datasets as input (tests/cli/dataset_input.sh): make datasets with tools other than libdata
(h5py; python3-lmdb with Caffe Datums encoded here by hand) and compare datasets without
libdata (h5py, python3-lmdb, a hand-written Datum decoder).

  make-h5py OUT [float|masks] PHOTO...   /data uint8 (N, 3, 30, 40) BGR planes (PIL resize),
                                         /label int32 i % 3 (float: float32 i * 0.5 + 0.25;
                                         masks: plus /mask (N, 1, 30, 40))
  make-caffe OUT raw|enc PHOTO...        convert_imageset-style LMDB: keys "%08d_<name>",
                                         label i % 3; raw = 3x30x40 BGR CHW, enc = file bytes
  same A B [shuffled]                    labels, names, class names, and pixels (raw) or
                                         bytes (encoded) equal; shuffled: as multisets keyed by
                                         name, and the order differs
  resized A B W H Q                      B = A re-encoded: same labels, names and classes,
                                         every sample a W x H JPEG, quality attribute Q
  source DS                              print the dataset's `source` record
"""
import hashlib
import io
import json
import os
import struct
import sys

import h5py
import lmdb
import numpy as np
from PIL import Image


# ---- Caffe Datum by hand (caffe.proto: 1 channels, 2 height, 3 width, 4 data, 5 label,
# 6 float_data, 7 encoded) -------------------------------------------------------------------
def varint(v):
    v &= (1 << 64) - 1
    out = b""
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def datum_encode(data, label, c=0, h=0, w=0, encoded=False):
    out = b""
    if c:
        out += b"\x08" + varint(c) + b"\x10" + varint(h) + b"\x18" + varint(w)
    out += b"\x22" + varint(len(data)) + data
    out += b"\x28" + varint(label)
    if encoded:
        out += b"\x38\x01"
    return out


def datum_decode(buf):
    d = {"channels": 0, "height": 0, "width": 0, "data": b"", "label": 0, "encoded": False,
         "float_data": []}
    i = 0
    while i < len(buf):
        key, i = read_varint(buf, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            v, i = read_varint(buf, i)
            name = {1: "channels", 2: "height", 3: "width", 5: "label", 7: "encoded"}[field]
            if name == "label" and v >= 1 << 63:
                v -= 1 << 64
            d[name] = bool(v) if name == "encoded" else v
        elif wire == 2:
            n, i = read_varint(buf, i)
            if field == 4:
                d["data"] = buf[i:i + n]
            elif field == 6:
                d["float_data"] += list(struct.unpack("<%df" % (n // 4), buf[i:i + n]))
            i += n
        elif wire == 5:
            d["float_data"].append(struct.unpack("<f", buf[i:i + 4])[0])
            i += 4
        else:
            raise ValueError("wire type %d" % wire)
    return d


def read_varint(buf, i):
    v = shift = 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return v, i


# ---- reading a dataset without libdata ------------------------------------------------------
def text(x):
    return x.decode() if isinstance(x, bytes) else str(x)


def read_h5(path):
    with h5py.File(path, "r") as f:
        n = f["label"].shape[0] if "label" in f else f["data"].shape[0]
        if "encoded" in f:
            enc, off = f["encoded"][:], f["offsets"][:]
            samples = [bytes(enc[off[i]:off[i + 1]]) for i in range(n)]
            kind = "encoded"
        else:
            samples = list(f["data"][:])
            kind = "raw"
        labels = f["label"][:].tolist() if "label" in f else [0] * n
        names = [text(x) for x in f["filename"][:]] if "filename" in f else None
        classes = [text(x) for x in f.attrs.get("class_names", [])]
        return {"kind": kind, "samples": samples, "labels": labels, "names": names,
                "classes": classes, "source": text(f.attrs.get("source", ""))}


def read_lmdb(path):
    env = lmdb.open(path, readonly=True, lock=False, subdir=True)
    samples, labels, names, kind = [], [], [], None
    with env.begin() as txn:
        for k, v in txn.cursor():
            d = datum_decode(bytes(v))
            key = k.decode()
            names.append(key.split("_", 1)[1] if key[:8].isdigit() and key[8:9] == "_" else key)
            labels.append(d["label"])
            if d["encoded"]:
                kind = "encoded"
                samples.append(bytes(d["data"]))
            else:
                kind = "raw"
                samples.append(np.frombuffer(d["data"], np.uint8).reshape(
                    d["channels"], d["height"], d["width"]))
    env.close()
    side = os.path.join(path, "libdata.json")
    meta = json.load(open(side)) if os.path.exists(side) else {}
    return {"kind": kind, "samples": samples, "labels": labels, "names": names,
            "classes": meta.get("class_names", []), "source": meta.get("source", "")}


def read_ds(path):
    if path.endswith(".txt"):
        parts = [read_h5(os.path.join(os.path.dirname(path), line.strip()))
                 for line in open(path) if line.strip()]
        out = dict(parts[0])
        for key in ("samples", "labels", "names"):
            out[key] = [x for p in parts for x in p[key]]
        return out
    return read_lmdb(path) if os.path.isdir(path) else read_h5(path)


def digest(sample):
    if isinstance(sample, bytes):
        return hashlib.md5(sample).hexdigest()
    return hashlib.md5(np.ascontiguousarray(sample).tobytes()).hexdigest() + str(sample.shape)


def same(a_path, b_path, shuffled=False):
    a, b = read_ds(a_path), read_ds(b_path)
    assert a["kind"] == b["kind"], (a["kind"], b["kind"])
    n = len(a["samples"])
    assert len(b["samples"]) == n, (len(b["samples"]), n)
    names_a = a["names"] or ["%08d" % i for i in range(n)]
    assert b["classes"] == a["classes"], (b["classes"], a["classes"])
    # a float scalar label (another tool's /label (N,) float) is carried as a 1-value vector
    def lab(x):
        return json.dumps(x[0] if isinstance(x, list) and len(x) == 1 else x)
    ra = [(names_a[i], lab(a["labels"][i]), digest(a["samples"][i])) for i in range(n)]
    rb = [(b["names"][i], lab(b["labels"][i]), digest(b["samples"][i])) for i in range(n)]
    if shuffled:
        assert sorted(ra) == sorted(rb), "not the same records"
        assert ra != rb, "the order did not change"
    else:
        for i in range(n):
            assert ra[i] == rb[i], (i, ra[i], rb[i])
    print("same: %d %s records (%s -> %s)%s" % (n, a["kind"], a_path, b_path,
                                                 ", shuffled" if shuffled else ""))


def resized(a_path, b_path, w, h, q):
    a, b = read_ds(a_path), read_ds(b_path)
    assert b["kind"] == "encoded"
    assert a["labels"] == b["labels"] and a["names"] == b["names"]
    assert a["classes"] == b["classes"]
    for s in b["samples"]:
        im = Image.open(io.BytesIO(s))
        assert im.format == "JPEG" and im.size == (int(w), int(h)), (im.format, im.size)
    with h5py.File(b_path, "r") as f:
        assert int(f.attrs["quality"]) == int(q), f.attrs["quality"]
    print("resized: %d JPEGs %sx%s, quality %s" % (len(b["samples"]), w, h, q))


def photo_bgr(path):
    im = Image.open(path).convert("RGB").resize((40, 30), Image.BILINEAR)
    return np.asarray(im)[:, :, ::-1].transpose(2, 0, 1).copy()  # BGR planes


def make_h5py(out, variant, photos):
    data = np.stack([photo_bgr(p) for p in photos])
    n = len(photos)
    with h5py.File(out, "w") as f:
        f["data"] = data
        if variant == "float":
            f["label"] = (np.arange(n) * 0.5 + 0.25).astype(np.float32)
        else:
            f["label"] = (np.arange(n) % 3).astype(np.int32)
        if variant == "masks":
            f["mask"] = np.zeros((n, 1, 30, 40), np.uint8)


def make_caffe(out, kind, photos):
    env = lmdb.open(out, map_size=1 << 28)
    with env.begin(write=True) as txn:
        for i, p in enumerate(photos):
            key = ("%08d_%s" % (i, os.path.basename(p))).encode()
            if kind == "raw":
                px = photo_bgr(p)
                val = datum_encode(px.tobytes(), i % 3, 3, 30, 40)
            else:
                val = datum_encode(open(p, "rb").read(), i % 3, encoded=True)
            txn.put(key, val)
    env.close()


def main(argv):
    cmd = argv[1]
    if cmd == "make-h5py":
        variant = argv[3] if argv[3] in ("float", "masks") else ""
        make_h5py(argv[2], variant, argv[4:] if variant else argv[3:])
    elif cmd == "make-caffe":
        make_caffe(argv[2], argv[3], argv[4:])
    elif cmd == "same":
        same(argv[2], argv[3], len(argv) > 4 and argv[4] == "shuffled")
    elif cmd == "resized":
        resized(*argv[2:7])
    elif cmd == "source":
        print(read_ds(argv[2])["source"])
    else:
        raise SystemExit("unknown command " + cmd)


if __name__ == "__main__":
    main(sys.argv)
