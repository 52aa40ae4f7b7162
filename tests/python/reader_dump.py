#!/usr/bin/python3
"""Independent reference for the reader tests: reads samples with h5py (never libdata).

  reader_dump.py bytes  FILE DSET IDX OUT   raw bytes of FILE[DSET][i] for each index, in order
  reader_dump.py crc    FILE DSET IDX OUT   uint32 zlib.crc32 of each sample's bytes, in order
  reader_dump.py labels FILE DSET IDX OUT   float64 labels
  reader_dump.py decode FILE encoded IDX OUT  PIL-decoded RGB CHW bytes of encoded samples
  reader_dump.py ref    FILE DSET IDX OUT CW CH MEANS SCALE SWAP NHWC
        float32 reference transform: center crop CWxCH (0 0 = none), channel reverse if SWAP,
        (x - mean[c]) * SCALE with MEANS "a,b,c" or "-" (none), NCHW or NHWC if NHWC=1
  reader_dump.py big    FILE N            write an (N,3,224,224) uint8 file in libdata's
        layout (1 MiB chunks along N), each sample distinct, labels i % 1000

IDX is a file of native uint64 indices (the order the reader reported). A FILE ending in .txt
is a split list (one .h5 per line, relative to the list's folder).
"""
import os
import sys
import zlib

import h5py
import numpy as np


class Split:
    """A list of HDF5 files read as one dataset."""

    def __init__(self, path, dset):
        base = os.path.dirname(path)
        names = [l.strip() for l in open(path) if l.strip()]
        self.files = [h5py.File(n if os.path.exists(n) else os.path.join(base, n), "r")
                      for n in names]
        self.ds = [f[dset] for f in self.files]
        self.start = np.cumsum([0] + [len(d) for d in self.ds])

    def __getitem__(self, i):
        k = int(np.searchsorted(self.start, i, side="right")) - 1
        return self.ds[k][i - self.start[k]]


def open_ds(path, dset):
    if path.endswith(".txt"):
        return Split(path, dset)
    return h5py.File(path, "r")[dset]


def main():
    mode = sys.argv[1]
    if mode == "big":
        path, n = sys.argv[2], int(sys.argv[3])
        k = max(1, (1 << 20) // (3 * 224 * 224))
        base = np.random.default_rng(5).integers(0, 256, size=(3, 224, 224 + 64), dtype=np.uint8)
        tmp = path + ".tmp"
        with h5py.File(tmp, "w") as f:
            f.attrs["format"] = np.bytes_("libdata")
            f.attrs["channel_order"] = np.bytes_("BGR")
            d = f.create_dataset("data", (n, 3, 224, 224), np.uint8, chunks=(k, 3, 224, 224))
            step = 256
            for s in range(0, n, step):
                e = min(n, s + step)
                blk = np.empty((e - s, 3, 224, 224), np.uint8)
                for i in range(s, e):
                    o = i % 64
                    blk[i - s] = base[:, :, o:o + 224]
                    blk[i - s, 0, 0, :8] = np.frombuffer(np.uint64(i).tobytes(), np.uint8)
                d[s:e] = blk
            f.create_dataset("label", data=(np.arange(n) % 1000).astype(np.int32))
        os.rename(tmp, path)
        return
    path, dset, idxf, out = sys.argv[2:6]
    idx = np.fromfile(idxf, dtype=np.uint64)
    ds = open_ds(path, dset)
    with open(out, "wb") as o:
        if mode == "bytes":
            for i in idx:
                o.write(np.ascontiguousarray(ds[int(i)]).tobytes())
        elif mode == "crc":
            # read the file front to back in slices (fast even when the page cache is cold),
            # then answer in the order asked
            n = len(ds) if not isinstance(ds, Split) else int(ds.start[-1])
            by_index = np.zeros(n, np.uint32)
            step = 256
            for s in range(0, n, step):
                blk = ds[s:min(n, s + step)] if not isinstance(ds, Split) else \
                    np.stack([ds[i] for i in range(s, min(n, s + step))])
                for k in range(blk.shape[0]):
                    by_index[s + k] = zlib.crc32(np.ascontiguousarray(blk[k]).tobytes())
            o.write(by_index[idx.astype(np.int64)].tobytes())
        elif mode == "decode":
            import io
            from PIL import Image
            f = h5py.File(path, "r")
            off, enc = f["offsets"][:], f["encoded"]
            for i in idx:
                b = enc[int(off[int(i)]):int(off[int(i) + 1])].tobytes()
                im = np.asarray(Image.open(io.BytesIO(b)).convert("RGB"))
                o.write(np.ascontiguousarray(im.transpose(2, 0, 1)).tobytes())
        elif mode == "labels":
            o.write(np.array([float(np.asarray(ds[int(i)]).ravel()[0]) for i in idx],
                             np.float64).tobytes())
        elif mode == "ref":
            cw, ch, means, scale, swap, nhwc = sys.argv[6:12]
            cw, ch, scale = int(cw), int(ch), float(scale)
            for i in idx:
                x = np.asarray(ds[int(i)]).astype(np.float32)
                if x.ndim == 2:
                    x = x[None]
                c, h, w = x.shape
                if cw:
                    y0, x0 = (h - ch) // 2, (w - cw) // 2
                    x = x[:, y0:y0 + ch, x0:x0 + cw]
                if swap == "1":
                    x = x[::-1]
                if means != "-":
                    m = np.array([float(v) for v in means.split(",")], np.float32)
                    x = x - m.reshape(-1, 1, 1)
                x = x * np.float32(scale)
                if nhwc == "1":
                    x = x.transpose(1, 2, 0)
                o.write(np.ascontiguousarray(x, np.float32).tobytes())
        else:
            sys.exit("unknown mode " + mode)


if __name__ == "__main__":
    main()
