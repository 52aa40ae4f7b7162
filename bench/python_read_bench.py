#!/usr/bin/python3
"""Iteration throughput from Python: libdata.Reader vs the same HDF5 file read through h5py and
a torch DataLoader, side by side in one run (the page cache is warmed right before each
measurement; see ARCHITECTURE.md "Facts measured").

    PYTHONPATH=bindings/python LIBDATA_LIBRARY=build/libdata.so \
        /usr/bin/python3 bench/python_read_bench.py [--dataset X.h5] [--n 4000] [--size 64]

Without --dataset it makes one: samples/images converted by libdata.convert() at --size,
listed repeatedly up to --n samples (raw uint8 BGR, libdata's chunking).

Pipelines, all shuffled, batch --batch, uint8 NCHW batches:
  libdata.Reader copy=True      NumPy copies (the default)
  libdata.Reader copy=False     zero-copy views, valid until the next batch
  libdata.torch + DataLoader    the adapter, 0 and 2 workers
  h5py per-sample + DataLoader  map-style Dataset (f["data"][i]) + default collate, 0/2 workers
  h5py per-batch + DataLoader   BatchSampler; sorted read_direct into one array, 0/2 workers

Measured 2026-12-02, 2 cores shared with other jobs (load ~7), 4000 x 3x64x64 from
samples/images, batch 64 (samples/s): Reader copies 170k, views 251k; libdata.torch +
DataLoader 125k (0 workers) / 17k (2 workers); h5py per-sample + DataLoader 3.8k / 4.4k;
h5py per-batch + DataLoader 10.5k / 9.8k. Reader (copies) vs the best h5py pipeline: 16x.
"""
import argparse
import os
import sys
import tempfile
import time

import numpy as np

import libdata

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLES = os.path.join(HERE, "..", "samples")


def make_dataset(path, n, size):
    listing = [ln for ln in open(os.path.join(SAMPLES, "train.txt")).read().splitlines() if ln]
    listing += [ln for ln in open(os.path.join(SAMPLES, "val.txt")).read().splitlines() if ln]
    reps = (listing * (n // len(listing) + 1))[:n]
    lst = path + ".list.txt"
    with open(lst, "w") as f:
        f.write("\n".join(reps) + "\n")
    t0 = time.perf_counter()
    s = libdata.convert(os.path.join(SAMPLES, "images"), path, list_file=lst, resize=size)
    os.unlink(lst)
    print(f"made {path}: {s.converted} samples of 3x{size}x{size} in "
          f"{time.perf_counter() - t0:.1f} s")


def warm(path):
    with open(path, "rb") as f:
        while f.read(1 << 24):
            pass


def timed(name, make_source, epochs, n_expected, path, results):
    """make_source() gives something whose each iteration is one epoch of (data, labels)
    batches (a Reader, a DataLoader). One warm-up epoch (start-up, worker forks, caches), then
    `epochs` measured epochs on the same object."""
    src = make_source()
    try:
        for _ in src:
            pass
        warm(path)
        t0 = time.perf_counter()
        count = done = 0
        # At least `epochs` epochs and about a second, so that fast pipelines are not timed
        # over a few milliseconds.
        while done < epochs or (time.perf_counter() - t0 < 1.0 and done < 100):
            for batch in src:
                count += len(batch[1])
            done += 1
        dt = time.perf_counter() - t0
    finally:
        close = getattr(src, "close", None)
        if close is not None:
            close()
        del src
    rate = count / dt
    results.append((name, rate))
    if count != done * n_expected:
        print(f"  note: {name} delivered {count} samples for {done} x {n_expected}")
    print(f"  {name:<40} {rate:>10,.0f} samples/s  ({count} samples, {dt:.2f} s)")
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset")
    ap.add_argument("--n", type=int, default=4000)
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2, help="libdata reader threads")
    ap.add_argument("--no-torch", action="store_true")
    args = ap.parse_args()

    tmp = None
    path = args.dataset
    if path is None:
        tmp = tempfile.TemporaryDirectory(prefix="libdata-pybench-")
        path = os.path.join(tmp.name, "bench.h5")
        make_dataset(path, args.n, args.size)

    import h5py
    with h5py.File(path, "r") as f:
        n, shape = f["data"].shape[0], f["data"].shape[1:]
        chunks = f["data"].chunks
    print(f"dataset {path}: {n} x {shape} uint8, chunks {chunks}; batch {args.batch}, "
          f"{args.epochs} epochs, cpus {os.cpu_count()}")
    results = []
    B = args.batch

    def lib_reader(copy):
        return lambda: libdata.Reader(path, batch_size=B, shuffle=True, seed=1,
                                      threads=args.threads, copy=copy)

    timed("libdata.Reader (copies)", lib_reader(True), args.epochs, n, path, results)
    timed("libdata.Reader (views, copy=False)", lib_reader(False), args.epochs, n, path,
          results)

    if not args.no_torch:
        try:
            import torch
            from torch.utils.data import DataLoader, Dataset, BatchSampler, RandomSampler
        except ImportError:
            print("torch not installed: DataLoader baselines skipped")
            args.no_torch = True
    if not args.no_torch:
        torch.set_num_threads(1)
        import libdata.torch as ldt

        labels_all = h5py.File(path, "r")["label"][:]  # small: kept in memory, as usual

        class H5Sample(Dataset):
            """The usual map-style pattern: open lazily in each worker, read one sample."""
            def __init__(self):
                self.f = None

            def __len__(self):
                return n

            def __getitem__(self, i):
                if self.f is None:
                    self.f = h5py.File(path, "r")
                return self.f["data"][i], labels_all[i]

        class H5Batch(H5Sample):
            """A stronger baseline: the batch's samples read_direct()ed in sorted order into
            one new array, no collate (h5py fancy indexing is ~10x slower than this)."""
            def __getitem__(self, idx):
                if self.f is None:
                    self.f = h5py.File(path, "r")
                idx = np.sort(np.asarray(idx))
                out = np.empty((len(idx),) + tuple(shape), np.uint8)
                d = self.f["data"]
                for j, i in enumerate(idx):
                    d.read_direct(out, np.s_[i], np.s_[j])
                return torch.from_numpy(out), torch.from_numpy(labels_all[idx])

        for w in (0, 2):
            def adapter(w=w):
                ds = ldt.Dataset(path, batch_size=B, shuffle=True, seed=1,
                                 threads=args.threads if w == 0 else None)
                return DataLoader(ds, batch_size=None, num_workers=w, persistent_workers=w > 0)
            timed(f"libdata.torch + DataLoader({w} workers)", adapter, args.epochs, n, path,
                  results)
        for w in (0, 2):
            def per_sample(w=w):
                return DataLoader(H5Sample(), batch_size=B, shuffle=True, num_workers=w,
                                  persistent_workers=w > 0)
            timed(f"h5py per-sample + DataLoader({w} workers)", per_sample, args.epochs, n,
                  path, results)
        for w in (0, 2):
            def per_batch(w=w):
                ds = H5Batch()
                bs = BatchSampler(RandomSampler(range(n)), batch_size=B, drop_last=False)
                return DataLoader(ds, sampler=bs, batch_size=None, num_workers=w,
                                  persistent_workers=w > 0)
            timed(f"h5py per-batch + DataLoader({w} workers)", per_batch, args.epochs, n,
                  path, results)

    rates = dict(results)
    lib = rates["libdata.Reader (copies)"]
    print("\nratios (libdata.Reader copies / other):")
    for name, rate in results[1:]:
        print(f"  vs {name:<40} {lib / rate:6.2f}x")
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
