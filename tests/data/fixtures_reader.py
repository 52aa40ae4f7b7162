"""Reader fixtures (tests/unit/test_reader.c, test_h5_store.c): small HDF5 datasets in every
layout the reader must handle, made with h5py so they are independent of libdata's writer.

  reader/raw_ours.h5     uint8 (100,3,24,20), chunks (7,3,24,20), unfiltered, int32 labels,
                         attributes like libdata's writer (format, channel_order=BGR)
  reader/raw_default.h5  same pixels, h5py's default chunking (chunks=True: cuts samples)
  reader/raw_contig.h5   same pixels, contiguous
  reader/raw_deflate.h5  same pixels, chunks (5,3,24,20), gzip 4 + shuffle
  reader/raw_float.h5    float32 (100,3,24,20) = pixels / 2, float64 labels, names x / y
  reader/raw_gray.h5     uint8 (30,16,16) (N,H,W), int64 labels
  reader/enc.h5          24 photos as JPEG bytes (/encoded, /offsets, /shape), 500x375 and
                         375x500, attributes format/storage=encoded
  reader/enc_same.h5     12 photos re-encoded at 120x90 q85 (one common size)
  reader/enc_corrupt.h5  enc_same with sample 5 truncated and sample 7 garbage
  reader/split.txt       raw_ours' samples in three files split-0/1/2.h5 (relative names)
  reader/truncated.h5    raw_ours.h5 cut to 60 % of its size
  reader/garbage.h5      4 KiB of random bytes;  reader/empty.h5: zero bytes
  reader/chunk_past_eof.h5  opens with h5py (superblock end-of-file patched) but chunks 10..14
                         of /data lie beyond the end of the file
"""
import struct
import io
import os

import h5py
import numpy as np
from PIL import Image

N, C, H, W = 100, 3, 24, 20


def pixels():
    rng = np.random.default_rng(42)
    return rng.integers(0, 256, size=(N, C, H, W), dtype=np.uint8)


def labels():
    return (np.arange(N, dtype=np.int32) * 7) % 10


def ours_attrs(f, storage="raw", c=3, h=H, w=W):
    f.attrs["format"] = np.bytes_("libdata")
    f.attrs["format_version"] = np.int32(1)
    f.attrs["storage"] = np.bytes_(storage)
    f.attrs["channel_order"] = np.bytes_("BGR" if storage == "raw" else "RGB")
    f.attrs["layout"] = np.bytes_("NCHW")
    f.attrs["channels"] = np.int32(c)
    f.attrs["height"] = np.int32(h)
    f.attrs["width"] = np.int32(w)


def write_raw(path, x, y, **kw):
    with h5py.File(path, "w") as f:
        ours_attrs(f)
        f.create_dataset("data", data=x, **kw)
        f.create_dataset("label", data=y)


def write_encoded(path, blobs, shapes, y):
    with h5py.File(path, "w") as f:
        same = len(set(shapes)) == 1
        ours_attrs(f, "encoded", 3, shapes[0][1] if same else 0, shapes[0][2] if same else 0)
        f.attrs["encoding"] = np.bytes_("jpeg")
        off = np.zeros(len(blobs) + 1, np.uint64)
        off[1:] = np.cumsum([len(b) for b in blobs])
        enc = np.frombuffer(b"".join(blobs), np.uint8)
        f.create_dataset("encoded", data=enc, chunks=(1 << 16,), maxshape=(None,))
        f.create_dataset("offsets", data=off)
        f.create_dataset("shape", data=np.array(shapes, np.uint32))
        f.create_dataset("label", data=np.asarray(y, np.int32))


def make(outdir, photos):
    d = os.path.join(outdir, "reader")
    os.makedirs(d, exist_ok=True)
    x, y = pixels(), labels()
    write_raw(os.path.join(d, "raw_ours.h5"), x, y, chunks=(7, C, H, W))
    write_raw(os.path.join(d, "raw_default.h5"), x, y, chunks=True)
    write_raw(os.path.join(d, "raw_contig.h5"), x, y)
    write_raw(os.path.join(d, "raw_deflate.h5"), x, y, chunks=(5, C, H, W), compression="gzip",
              compression_opts=4, shuffle=True)
    with h5py.File(os.path.join(d, "raw_float.h5"), "w") as f:
        f.create_dataset("x", data=x.astype(np.float32) / 2, chunks=(10, C, H, W))
        f.create_dataset("y", data=y.astype(np.float64) + 0.5)
    rng = np.random.default_rng(7)
    with h5py.File(os.path.join(d, "raw_gray.h5"), "w") as f:
        f.create_dataset("data", data=rng.integers(0, 256, (30, 16, 16), dtype=np.uint8))
        f.create_dataset("label", data=np.arange(30, dtype=np.int64))
    # encoded: the photos' own bytes (two sizes), and re-encoded small copies (one size)
    blobs, shapes = [], []
    for p in photos[:24]:
        b = open(p, "rb").read()
        im = Image.open(io.BytesIO(b))
        blobs.append(b)
        shapes.append((3, im.height, im.width))
    write_encoded(os.path.join(d, "enc.h5"), blobs, shapes, [i % 5 for i in range(len(blobs))])
    blobs, shapes = [], []
    for p in photos[:12]:
        im = Image.open(p).convert("RGB").resize((120, 90), Image.BILINEAR)
        bio = io.BytesIO()
        im.save(bio, format="JPEG", quality=85)
        blobs.append(bio.getvalue())
        shapes.append((3, 90, 120))
    write_encoded(os.path.join(d, "enc_same.h5"), blobs, shapes, list(range(12)))
    bad = list(blobs)
    bad[5] = bad[5][: len(bad[5]) // 3]                       # truncated JPEG
    bad[7] = b"\xff\xd8\xff" + bytes(range(256)) * 4          # garbage after a JPEG marker
    write_encoded(os.path.join(d, "enc_corrupt.h5"), bad, shapes, list(range(12)))
    # split list: relative names, resolved against the list's folder
    cuts = [0, 33, 70, N]
    with open(os.path.join(d, "split.txt"), "w") as lst:
        for k in range(3):
            name = f"split-{k}.h5"
            write_raw(os.path.join(d, name), x[cuts[k]:cuts[k + 1]], y[cuts[k]:cuts[k + 1]],
                      chunks=(4, C, H, W))
            lst.write(name + "\n")
    raw = open(os.path.join(d, "raw_ours.h5"), "rb").read()
    open(os.path.join(d, "truncated.h5"), "wb").write(raw[: len(raw) * 6 // 10])
    open(os.path.join(d, "garbage.h5"), "wb").write(np.random.default_rng(3).bytes(4096))
    open(os.path.join(d, "empty.h5"), "wb").close()
    # labels first so that they survive the cut; superblock v0 keeps the end-of-file address
    # at byte 40: patch it so HDF5 opens the file, and the chunk table points past its end
    p = os.path.join(d, "chunk_past_eof.h5")
    with h5py.File(p, "w", libver="earliest") as f:
        f.create_dataset("label", data=y)
        ds = f.create_dataset("data", x.shape, np.uint8, chunks=(7, C, H, W))
        ds[...] = x
        cut = ds.id.get_chunk_info(10).byte_offset + 100
    raw = bytearray(open(p, "rb").read()[:cut])
    assert raw[8] == 0, "expected superblock version 0"
    raw[40:48] = struct.pack("<Q", cut)
    open(p, "wb").write(bytes(raw))
