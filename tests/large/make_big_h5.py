#!/usr/bin/python3
"""Write a large raw HDF5 dataset quickly, every sample distinct and checkable (big_pattern.h).

Usage: make_big_h5.py OUT.h5 N C H W

/data is uint8 N x C x H x W, contiguous; /label int32. h5py lays the file out (space
allocated at creation, never filled), then the pixels are written straight at the dataset's
offset in big sequential writes: the whole file is real data (not sparse), written at disk
speed. Sample i: its index as 8 little-endian bytes, then the periodic pattern from offset
(i * 7919) mod P; label (i * 31) mod 1000.
"""
import os
import sys

import h5py
import numpy as np

P = 1048573


def main():
    out, n, c, h, w = sys.argv[1], *map(int, sys.argv[2:6])
    s = c * h * w
    assert s > 8 and s - 8 <= P
    k = np.arange(2 * P, dtype=np.uint64)
    base = (((k % P) * np.uint64(2654435761)) >> np.uint64(13)).astype(np.uint8)
    with h5py.File(out, "w") as f:
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_alloc_time(h5py.h5d.ALLOC_TIME_EARLY)
        dcpl.set_fill_time(h5py.h5d.FILL_TIME_NEVER)
        space = h5py.h5s.create_simple((n, c, h, w))
        dsid = h5py.h5d.create(f.id, b"data", h5py.h5t.NATIVE_UINT8, space, dcpl=dcpl)
        offset = dsid.get_offset()
        f["label"] = ((np.arange(n, dtype=np.int64) * 31) % 1000).astype(np.int32)
    per = max(1, (64 << 20) // s)  # samples per write: 64 MiB
    buf = np.empty((per, s), np.uint8)
    with open(out, "r+b") as f:
        f.seek(offset)
        for i0 in range(0, n, per):
            m = min(per, n - i0)
            for j in range(m):
                i = i0 + j
                o = (i * 7919) % P
                buf[j, 8:] = base[o:o + s - 8]
            buf[:m, :8] = np.arange(i0, i0 + m, dtype="<u8").view(np.uint8).reshape(m, 8)
            f.write(buf[:m].tobytes())
    print(f"{out}: {n} samples of {c}x{h}x{w}, {os.path.getsize(out)} bytes")


if __name__ == "__main__":
    main()
