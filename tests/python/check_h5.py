#!/usr/bin/python3
"""Independent check (h5py) of HDF5 files written by test_h5_write.c.

The C test fills samples from formulas; this script recomputes them and compares.

  check_h5.py raw PATH N C H W [--deflate L] [--first I]
  check_h5.py encoded PATH N [--first I]
  check_h5.py split LIST N LIMIT_BYTES C H W
  check_h5.py split-encoded LIST N LIMIT_BYTES
  check_h5.py foreign PATH          (writes a data/label file like other tools make)

Exit 0 when everything matches; otherwise prints what differs and exits 1.
Keep the formulas in sync with test_h5_write.c.
"""
import os
import sys

import h5py
import numpy as np

CHUNK_BYTES = 1 << 20
CLASSES = ["bird", "car", "cat"]


def raw_pixels(i, c, h, w):
    j = np.arange(c * h * w, dtype=np.int64)
    return ((i * 31 + j * 7) % 251).astype(np.uint8).reshape(c, h, w)


def enc_bytes(i):
    n = 1000 + (i * 7919) % 60000
    j = np.arange(n, dtype=np.int64)
    return ((i + j * 13) % 256).astype(np.uint8)


def enc_shape(i):
    return (3, 10 + i % 4, 20 + i % 3)


def rel(i):
    return f"cls{i % 3}/img_{i:04d}.jpg"


def label(i):
    return i % 3


errors = []


def check(cond, msg):
    if not cond:
        errors.append(msg)


def s(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def check_attrs(f, storage, c, h, w):
    a = f.attrs
    check(s(a["format"]) == "libdata", f"format={a.get('format')!r}")
    check(int(a["format_version"]) == 1, "format_version")
    check(a["format_version"].dtype == np.int32,
          f"format_version dtype {a['format_version'].dtype}")
    check(s(a["storage"]) == storage, f"storage={a['storage']!r}")
    check(s(a["layout"]) == "NCHW", "layout")
    check(s(a["channel_order"]) == "BGR", f"channel_order={a['channel_order']!r}")
    check(int(a["channels"]) == c, f"channels={a['channels']}")
    check(int(a["height"]) == h, f"height={a['height']} want {h}")
    check(int(a["width"]) == w, f"width={a['width']} want {w}")
    check([s(x) for x in a["class_names"]] == CLASSES, f"class_names={list(a['class_names'])!r}")
    check(int(a["num_classes"]) == 3, "num_classes")
    want_mode = "none" if storage == "encoded" else "squash"  # the tests resize raw only
    check(s(a["resize_mode"]) == want_mode, f"resize_mode={a['resize_mode']!r}")
    check(int(a["resize_w"]) == w and int(a["resize_h"]) == h or storage == "encoded", "resize")
    check(s(a["source"]) == "/some/input", f"source={a['source']!r}")
    check(s(a["note"]) == "test note", f"note={a['note']!r}")
    check(s(a["tool_version"]).count(".") == 2, f"tool_version={a['tool_version']!r}")
    if storage == "encoded":
        check(s(a["encoding"]) == "jpeg", f"encoding={a['encoding']!r}")


def check_common(f, n, first):
    lab = f["label"]
    check(lab.dtype == np.int32, f"label dtype {lab.dtype}")
    check(lab.shape == (n,), f"label shape {lab.shape}")
    want = np.array([label(first + i) for i in range(n)], dtype=np.int32)
    check(np.array_equal(lab[...], want), "labels differ")
    fn = f["filename"]
    check(h5py.check_string_dtype(fn.dtype) is not None, f"filename dtype {fn.dtype}")
    check(h5py.check_string_dtype(fn.dtype).encoding == "utf-8", "filename encoding")
    got = [s(x) for x in fn[...]]
    check(got == [rel(first + i) for i in range(n)], f"filenames differ: {got[:3]}...")


def check_raw(path, n, c, h, w, deflate=0, first=0):
    with h5py.File(path, "r") as f:
        check_attrs(f, "raw", c, h, w)
        d = f["data"]
        check(d.dtype == np.uint8, f"data dtype {d.dtype}")
        check(d.shape == (n, c, h, w), f"data shape {d.shape}")
        k = max(1, CHUNK_BYTES // (c * h * w))
        # ~1 MiB chunks, capped by the announced number of samples (or the split size)
        check(d.chunks[1:] == (c, h, w) and 1 <= d.chunks[0] <= k,
              f"chunks {d.chunks}, want at most {(k, c, h, w)}")
        check(d.maxshape == (None, c, h, w), f"maxshape {d.maxshape}")
        if deflate:
            check(d.compression == "gzip" and d.compression_opts == deflate,
                  f"compression {d.compression} {d.compression_opts}")
        else:
            check(d.compression is None, f"compression {d.compression}")
        check(not d.shuffle, "shuffle filter set")
        check(d.fillvalue == 0, "fill value")
        # Chunks start on 4 KiB boundaries so that readers can map them page-aligned.
        if not deflate and hasattr(d.id, "get_num_chunks"):
            for k in range(d.id.get_num_chunks()):
                info = d.id.get_chunk_info(k)
                check(info.byte_offset % 4096 == 0, f"chunk {k} at {info.byte_offset}")
                check(info.filter_mask == 0, f"chunk {k} filter mask")
        data = d[...]
        for i in range(n):
            if not np.array_equal(data[i], raw_pixels(first + i, c, h, w)):
                errors.append(f"pixels of sample {i} differ")
                break
        check_common(f, n, first)


def check_encoded(path, n, first=0):
    with h5py.File(path, "r") as f:
        shapes = [enc_shape(first + i) for i in range(n)]
        same = len(set(shapes)) == 1
        check_attrs(f, "encoded", 3, shapes[0][1] if same else 0, shapes[0][2] if same else 0)
        e, o, sh = f["encoded"], f["offsets"], f["shape"]
        check(e.dtype == np.uint8 and o.dtype == np.uint64 and sh.dtype == np.uint32,
              f"dtypes {e.dtype} {o.dtype} {sh.dtype}")
        check(o.shape == (n + 1,), f"offsets shape {o.shape}")
        check(sh.shape == (n, 3), f"shape shape {sh.shape}")
        # at most 1 MiB, in 4 KiB steps: sized to the data when it is smaller (h5_write.c)
        check(len(e.chunks) == 1 and 4096 <= e.chunks[0] <= CHUNK_BYTES
              and e.chunks[0] % 4096 == 0, f"encoded chunks {e.chunks}")
        check(e.compression is None, "encoded compression")
        off = o[...]
        enc = e[...]
        check(off[0] == 0 and int(off[-1]) == e.shape[0], f"offsets ends {off[0]} {off[-1]}")
        for i in range(n):
            b = enc[int(off[i]):int(off[i + 1])]
            if not np.array_equal(b, enc_bytes(first + i)):
                errors.append(f"bytes of sample {i} differ")
                break
        check(np.array_equal(sh[...], np.array(shapes, dtype=np.uint32)), "shapes differ")
        check_common(f, n, first)


def check_split(listfile, n, limit, c, h, w):
    with open(listfile) as f:
        files = [line.rstrip("\n") for line in f if line.strip()]
    stem = listfile[:-4]
    check(files == [f"{stem}-{k:05d}.h5" for k in range(len(files))], f"list {files}")
    total = 0
    for p in files:
        with h5py.File(p, "r") as f:
            m = f["data"].shape[0]
            check(f["data"].size <= limit, f"{p}: {f['data'].size} bytes over {limit}")
            check(m > 0, f"{p}: empty")
            k = max(1, min(CHUNK_BYTES, limit) // (c * h * w))
            check(f["data"].chunks[0] == k, f"{p}: chunk rows {f['data'].chunks[0]}, want {k}")
        check_raw(p, m, c, h, w, first=total)
        total += m
    check(total == n, f"total {total} != {n}")
    print(len(files))


def check_split_encoded(listfile, n, limit):
    with open(listfile) as f:
        files = [line.rstrip("\n") for line in f if line.strip()]
    total = 0
    for p in files:
        with h5py.File(p, "r") as f:
            m = f["offsets"].shape[0] - 1
            check(f["encoded"].size <= limit, f"{p}: {f['encoded'].size} bytes over {limit}")
            check(m > 0, f"{p}: empty")
        check_encoded(p, m, first=total)
        total += m
    check(total == n, f"total {total} != {n}")
    print(len(files))


def make_foreign(path):
    with h5py.File(path, "w") as f:
        f["data"] = np.zeros((4, 3, 8, 8), dtype=np.float32)
        f["label"] = np.arange(4, dtype=np.float32)


def main():
    args = sys.argv[1:]
    opts = {}
    while len(args) >= 2 and args[-2].startswith("--"):
        opts[args[-2][2:]] = int(args[-1])
        args = args[:-2]
    mode = args[0]
    if mode == "raw":
        check_raw(args[1], *map(int, args[2:6]), deflate=opts.get("deflate", 0),
                  first=opts.get("first", 0))
    elif mode == "encoded":
        check_encoded(args[1], int(args[2]), first=opts.get("first", 0))
    elif mode == "split":
        check_split(args[1], *map(int, args[2:7]))
    elif mode == "split-encoded":
        check_split_encoded(args[1], int(args[2]), int(args[3]))
    elif mode == "foreign":
        make_foreign(args[1])
    else:
        sys.exit(__doc__)
    if errors:
        for e in errors:
            print("check_h5:", e, file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
