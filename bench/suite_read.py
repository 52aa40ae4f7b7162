#!/usr/bin/python3
"""Reading benchmark of bench/run: batches of 256 x 3x224x224 uint8 (NCHW) from the datasets
that dataconv made from the photo set (raw pixels and JPEG q70, HDF5 and LMDB), sequential and
shuffled, by libdata and by what users would otherwise write.

Readers (one process per run, page cache warm, a warm-up batch or epoch first):
  libdata C        `dataconv bench` (cli/bench.c: the public reader API, touching one byte per
                   cache line of each batch), all cores and 1 thread; warm-up: one untimed
                   epoch
  libdata Python   libdata.Reader(copy=True): each batch a NumPy array the program keeps
                   (copies), and copy=False (views valid until the next batch)
Every Python reader's loop reads one byte per cache line of each batch, as the C reader does,
so all rows pay the same consumer's cost.
  h5py slicing     d[s:s+256] (sequential), and read_direct into one reused array
  h5py fancy       d[sorted(batch indices)] (shuffled; h5py wants increasing indices)
  h5py loop        np.stack([d[i] for i in batch indices]) (shuffled)
  python-lmdb      Caffe Datum records: cursor walk (sequential) or txn.get per key
                   (shuffled), Datum parsed with python3-protobuf, pixels copied into the batch
  DataLoader       torch.utils.data.DataLoader over a map-style h5py Dataset (opened lazily
                   in each worker, default collate), 0 and 2 workers, shuffle=True
Encoded batches decode each JPEG to 3x224x224 uint8: libdata (libjpeg-turbo inside); h5py
blob slices + Pillow; python-lmdb + cv2.imdecode (as Caffe-style code does); DataLoader + Pillow.
Limits measured by the same run: memcpy bandwidth (NumPy copyto of 256 MiB, 1 and all
threads) as samples/s of 150,528 bytes, and the single-thread libjpeg-turbo decode rate of the
same 224x224 q70 JPEGs (BUILD/bench/baselines --decode, the CMake target of bench/baselines.c:
jpeg_read_scanlines into a reused buffer) times the number of cores.
Python readers run until at least --seconds have passed (whole batches, several epochs when
the dataset is small); the C reader runs whole epochs.
Cold cache: block-shuffled reading of a raw HDF5 file of >= 2 GB (16,000 samples, 2.4 GB, made
for this row) right after its pages were dropped (posix_fadvise DONTNEED on the file, checked
with fincore; not /proc/sys/vm/drop_caches, which would empty every other process's cache
too), against `dd bs=4M` of the same file, cold, measured in interleaved pairs (prepare, dd,
prepare, reader; the order reversed every other pair) and reported as the median of the
per-pair ratios with their range. `dd iflag=direct` (no page cache) is measured in each pair
too, as a second figure. "Prepare" is the drop, then touching and freeing as much anonymous
memory as the file (the `touch` mode below): on a VM with free page reporting (virtio-balloon,
as the test machine), memory the guest freed is handed back to the host within seconds, and
the first touch of such memory costs a host fault per page. The kernel's read-ahead for read()
takes 2 MiB folios, exactly the blocks that were handed back, so `dd` ran at 0.36-0.67 GB/s
(3.5 s of system time copying 2.4 GB) when it started a few seconds after a drop and at
1.4-1.7 GB/s (0.3 s) when it started at once: the disk was the same. Touching the memory first
puts every run in the state of a machine without that cost.

    suite_read.py worker KIND PATH seq|shuffle BATCH SECONDS [THREADS] [MAX_SAMPLES]
    suite_read.py memcpy THREADS
    suite_read.py touch BYTES
"""
import io
import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import suite_common as sc  # noqa: E402

C, H, W = 3, 224, 224
SAMPLE = C * H * W

# ---------------------------------------------------------------------------------------------
# workers: each makes an endless iterator of (data, labels) batches


def _epochs(n, batch, shuffle, seed=1):
    rng = np.random.default_rng(seed)
    while True:
        order = rng.permutation(n) if shuffle else np.arange(n)
        for s in range(0, n, batch):
            yield order[s:s + batch]


def gen_libdata_py(path, shuffle, batch, threads, copy=True):
    import libdata
    r = libdata.Reader(path, batch_size=batch, shuffle=shuffle, seed=1, threads=threads,
                       copy=copy)
    while True:
        for data, labels in r:
            yield data, labels


def gen_libdata_py_views(path, shuffle, batch, threads):
    return gen_libdata_py(path, shuffle, batch, threads, copy=False)


def gen_h5py(path, shuffle, batch, threads):
    import h5py
    f = h5py.File(path, "r")
    labels = f["label"][:]
    if "data" in f:
        d = f["data"]
        for idx in _epochs(d.shape[0], batch, shuffle):
            if shuffle:  # fancy indexing: the indices must be increasing
                idx = np.sort(idx)
                yield d[idx], labels[idx]
            else:
                yield d[idx[0]:idx[-1] + 1], labels[idx[0]:idx[-1] + 1]
    else:  # libdata's encoded layout: /encoded bytes, /offsets (N+1)
        from PIL import Image
        enc, off = f["encoded"], f["offsets"][:]
        for idx in _epochs(len(off) - 1, batch, shuffle):
            out = np.empty((len(idx), C, H, W), np.uint8)
            for j, i in enumerate(idx):
                b = enc[int(off[i]):int(off[i + 1])].tobytes()
                out[j] = np.asarray(Image.open(io.BytesIO(b)).convert("RGB")).transpose(2, 0, 1)
            yield out, labels[idx]


def gen_h5py_direct(path, shuffle, batch, threads):
    """Sequential batches read_direct()ed into one reused array: the careful h5py user."""
    import h5py
    f = h5py.File(path, "r")
    labels, d = f["label"][:], f["data"]
    buf = np.empty((batch, C, H, W), np.uint8)
    for idx in _epochs(d.shape[0], batch, False):
        s, e = int(idx[0]), int(idx[-1]) + 1
        d.read_direct(buf, np.s_[s:e], np.s_[0:e - s])
        yield buf[:e - s], labels[s:e]


def gen_h5py_loop(path, shuffle, batch, threads):
    """Shuffled batches one sample at a time (np.stack of d[i]): 50x faster than h5py's
    fancy indexing on these files."""
    import h5py
    f = h5py.File(path, "r")
    labels, d = f["label"][:], f["data"]
    for idx in _epochs(d.shape[0], batch, shuffle):
        yield np.stack([d[int(i)] for i in idx]), labels[idx]


def gen_lmdb(path, shuffle, batch, threads):
    import lmdb
    sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
    from lmdb_caffe_pb import Datum
    env = lmdb.open(path, readonly=True, lock=False, readahead=False, max_readers=4)
    txn = env.begin(buffers=True)
    keys = [bytes(k) for k in txn.cursor().iternext(keys=True, values=False)]
    n = len(keys)
    dm = Datum()

    def fill(out, j, v):
        dm.ParseFromString(v)
        if dm.encoded:
            import cv2
            im = cv2.imdecode(np.frombuffer(dm.data, np.uint8), cv2.IMREAD_COLOR)
            out[j] = im.transpose(2, 0, 1)
        else:
            out[j] = np.frombuffer(dm.data, np.uint8).reshape(C, H, W)
        return dm.label
    if shuffle:
        for idx in _epochs(n, batch, True):
            out = np.empty((len(idx), C, H, W), np.uint8)
            lab = np.array([fill(out, j, txn.get(keys[i])) for j, i in enumerate(idx)], np.int32)
            yield out, lab
    else:
        while True:
            cur = txn.cursor()
            cur.first()
            it = cur.iternext(keys=False, values=True)
            done = False
            while not done:
                out = np.empty((batch, C, H, W), np.uint8)
                lab, j = [], 0
                for v in it:
                    lab.append(fill(out, j, v))
                    j += 1
                    if j == batch:
                        break
                else:
                    done = True
                if j:
                    yield out[:j], np.array(lab, np.int32)


class H5Samples:
    """The usual map-style Dataset: the file opened lazily in each worker, one sample read per
    __getitem__ (decoded with Pillow when the file holds JPEGs)."""

    def __init__(self, path):
        import h5py
        self.path = path
        with h5py.File(path, "r") as f:
            self.encoded = "data" not in f
            self.n = f["label"].shape[0]
        self.f = None

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        import torch
        if self.f is None:
            import h5py
            self.f = h5py.File(self.path, "r")
            self.off = self.f["offsets"][:] if self.encoded else None
        if self.encoded:
            from PIL import Image
            b = self.f["encoded"][int(self.off[i]):int(self.off[i + 1])].tobytes()
            x = np.asarray(Image.open(io.BytesIO(b)).convert("RGB")).transpose(2, 0, 1)
            return torch.from_numpy(np.ascontiguousarray(x)), int(self.f["label"][i])
        return self.f["data"][i], int(self.f["label"][i])


def gen_dataloader(path, shuffle, batch, workers):
    import torch
    from torch.utils.data import DataLoader
    torch.set_num_threads(1)
    dl = DataLoader(H5Samples(path), batch_size=batch, shuffle=shuffle, num_workers=workers,
                    persistent_workers=workers > 0)
    while True:
        for x, y in dl:
            yield x, y


GENS = {"libdata-py": gen_libdata_py, "libdata-py-views": gen_libdata_py_views, "h5py": gen_h5py, "h5py-loop": gen_h5py_loop,
        "h5py-direct": gen_h5py_direct,
        "lmdb": gen_lmdb,
        "dataloader": gen_dataloader}


def worker(kind, path, order, batch, seconds, threads, max_samples):
    gen = GENS[kind](path, order == "shuffle", batch, threads)
    next(gen)  # warm-up: open, first batch (DataLoader: workers started)
    t0 = time.perf_counter()
    n = nb = 0
    chk = 0
    while True:
        x, y = next(gen)
        # read the batch as a consumer would, like cli/bench.c: one byte per 64-byte cache line
        # (a view, not a copy: x is C-contiguous for every reader here, torch tensors included)
        chk += int(np.bitwise_or.reduce(np.asarray(x).reshape(-1)[::64]))
        n += len(y)
        nb += 1
        dt = time.perf_counter() - t0
        if dt >= seconds or (max_samples and n >= max_samples):
            break
    print(json.dumps({"samples": n, "batches": nb, "seconds": dt, "checksum": chk}))
    sys.stdout.flush()
    os._exit(0)  # DataLoader workers and reader threads: no slow teardown in the timing


def memcpy_worker(threads):
    import threading
    a = np.ones(256 << 20, np.uint8)
    b = np.zeros_like(a)
    parts = np.array_split(np.arange(len(a)), threads)
    bounds = [(int(p[0]), int(p[-1]) + 1) for p in parts]

    def copy(lo, hi):
        np.copyto(b[lo:hi], a[lo:hi])
    best = None
    for _ in range(6):
        ts = [threading.Thread(target=copy, args=bd) for bd in bounds]
        t = time.perf_counter()
        for th in ts:
            th.start()
        for th in ts:
            th.join()
        dt = time.perf_counter() - t
        best = dt if best is None else min(best, dt)
    print(json.dumps({"GB_per_s": a.nbytes / best / 1e9}))


# ---------------------------------------------------------------------------------------------
# driver

def find_baselines(build):
    """BUILD/bench/baselines (bench/baselines.c; a CMake target with -DLIBDATA_BUILD_BENCH=ON,
    which bench/run sets), or None."""
    exe = os.path.join(build, "bench", "baselines")
    if not os.access(exe, os.X_OK):
        sc.log(f"  no {exe} (configure with -DLIBDATA_BUILD_BENCH=ON): the libjpeg-turbo "
               "decode limit is not measured")
        return None
    return exe


def make_datasets(dataconv, photos, work, formats):
    """dataconv-made datasets: FORMATS is a list of (kind, fmt, n), kind raw|q70, fmt h5|lmdb
    (the photo list repeated when n is larger). Returns {(kind, fmt, n): path}."""
    sys.path.insert(0, HERE)
    from suite_convert import list_images
    items = list_images(photos)
    out = {}
    for kind, fmt, n in formats:
        lst = os.path.join(work, f"list{n}.txt")
        with open(lst, "w") as f:
            for k in range(n):
                _, rel, label = items[k % len(items)]
                f.write(f"{rel} {label}\n")
        path = os.path.join(work, f"{kind}{n}.{fmt}")
        stamp = path + ".complete"
        st = os.stat(dataconv)
        made_by = f"{os.path.realpath(dataconv)} {st.st_size} {st.st_mtime_ns}"
        if not os.path.exists(stamp) or open(stamp).read() != made_by:
            subprocess.run(["rm", "-rf", path], check=True)
            t = time.perf_counter()
            q = ["--quality", "70"] if kind == "q70" else []
            subprocess.run([dataconv, "--list", lst, "--root", photos, path, "--resize",
                            str(W), "--quiet"] + q, check=True)
            with open(stamp, "w") as f:
                f.write(made_by)
            sc.log(f"  made {path} ({n} samples, {time.perf_counter() - t:.1f} s)")
        out[(kind, fmt, n)] = path
    return out


def _size(path):
    if os.path.isdir(path):
        return sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path))
    return os.path.getsize(path)


class Reading:
    def __init__(self, res, build, dataconv, work, reps, seconds, batch):
        self.res, self.build, self.dataconv = res, build, dataconv
        self.work, self.reps, self.seconds, self.batch = work, reps, seconds, batch
        self.cores = os.cpu_count()
        self.baselines = find_baselines(build)
        self.env = {"LIBDATA_LIBRARY": os.path.join(build, "libdata.so"),
                    "PYTHONPATH": os.path.join(ROOT, "bindings", "python")}

    def c_reader(self, path, shuffle, threads, n, rate=50000, epochs=None, order=None,
                 warmup=True):
        """One run of the C reader: whole epochs, about self.seconds long at RATE samples/s
        (a guess: being off only makes the run shorter or longer)."""
        epochs = epochs or max(1, min(50, round(self.seconds * rate / max(n, 1))))
        order = order or ("shuffle" if shuffle else "seq")
        out, dt, rss = sc.run([self.dataconv, "bench", path, "--batch", self.batch,
                               "--order", order, "-j", threads,
                               "--epochs", epochs + warmup])
        # `dataconv bench` prints one line per epoch: skip epoch 0 (the warm-up)
        rates = [float(ln.split("in ")[1].split(" s")[0]) for ln in out.splitlines()
                 if ln.startswith("epoch ") and not (warmup and ln.startswith("epoch 0:"))]
        return n * len(rates) / sum(rates), rss, sc.run.last_anon

    def py_reader(self, kind, path, shuffle, arg, max_samples=0, seconds=None):
        r = sc.run_json([sc.PY, os.path.abspath(__file__), "worker", kind, path,
                         "shuffle" if shuffle else "seq", self.batch,
                         seconds or self.seconds, arg, max_samples], env=self.env)
        return r["samples"] / r["seconds"], r["rss_mb"], r["anon_mb"]

    def measure(self, group, name, path, fn, paired=None, **extra):
        """REPS runs of FN. With PAIRED (the C reader on the same file and options), each run
        is paired with one of it, right before or after (alternating), and the row keeps the
        per-pair ratios FN / PAIRED (ratio_c): this VM drifts by 10-20 % within minutes, so
        rows measured minutes apart do not compare as well as a pair does."""
        ratios = []

        def go():
            sc.warm(path)
            if paired is None:
                return fn()
            first = len(ratios) % 2 == 0
            c = paired() if first else None
            r = fn()
            c = c or paired()
            ratios.append(r[0] / c[0])
            return r
        t0 = time.perf_counter()
        got, err = sc.repeat(self.reps, go)
        wall = time.perf_counter() - t0
        if paired is not None:
            extra["ratio_c"] = sc.summarize(ratios)
        row = self.res.add("read", group, name, path=os.path.basename(path),
                           sps=sc.summarize([g[0] for g in got]),
                           rss_mb=sc.summarize([g[1] for g in got]),
                           anon_mb=sc.summarize([g[2] for g in got]),
                           error=None if got else err, **extra)
        sc.log(f"  {group:30} {name:42} {sc.fmt_rate(row['sps'], ' samples/s'):>34}"
               f"  RSS {row['rss_mb']['median'] if got else 0:7.1f} MiB  [{wall:.1f} s]")
        return row

    def limits(self, jpeg_dir, raw_path=None):
        T = self.cores
        for t in sorted({1, T}):
            got, err = sc.repeat(self.reps, lambda t=t: sc.run_json(
                [sc.PY, os.path.abspath(__file__), "memcpy", t])["GB_per_s"])
            s = sc.summarize(got)
            self.res.add("limit", "memcpy", f"memcpy, {t} thread{'s' * (t > 1)}", gbs=s,
                         sps=sc.summarize([g * 1e9 / SAMPLE for g in got]), threads=t,
                         error=None if got else err)
            sc.log(f"  memcpy {t} threads: {sc.fmt_rate(s, ' GB/s')}")
        if raw_path:
            self.pread_limit(raw_path)
        files = sorted(os.path.join(jpeg_dir, f) for f in os.listdir(jpeg_dir))
        if self.baselines:
            got, err = sc.repeat(self.reps, lambda: sc.run_json(
                [self.baselines, "--decode", min(2.0, self.seconds)] + files)["images_per_s"])
        else:
            got, err = [], "BUILD/bench/baselines not built (-DLIBDATA_BUILD_BENCH=ON)"
        s = sc.summarize(got)
        self.res.add("limit", "decode", "libjpeg-turbo decode 224x224 q70, 1 thread", sps=s,
                     error=None if got else err)
        self.res.add("limit", "decode", f"libjpeg-turbo 1 thread x {T} cores",
                     sps=sc.summarize([g * T for g in got]), error=None if got else err)
        sc.log(f"  libjpeg-turbo decode, 1 thread: {sc.fmt_rate(s, ' img/s')}")

    def pread_limit(self, path):
        """The kernel's page-cache copy: BUILD/bench/baselines --pread, 4 MiB preads of the warm
        raw file into 64 MiB of huge pages per thread (as the reader's batch ring), by 1 and by
        all cores' threads (group "pread"): what any reader that copies out of the page cache
        is made of, the warm rows' second limit."""
        for t in sorted({1, self.cores}):
            if self.baselines:
                def go(t=t):
                    sc.warm(path)
                    return sc.run_json([self.baselines, "--pread", min(2.0, self.seconds), t,
                                        path])["GB_per_s"]
                got, err = sc.repeat(self.reps, go)
            else:
                got, err = [], "BUILD/bench/baselines not built (-DLIBDATA_BUILD_BENCH=ON)"
            s = sc.summarize(got)
            self.res.add("limit", "pread", f"pread of the warm file, {t} thread{'s' * (t > 1)}",
                         gbs=s, sps=sc.summarize([g * 1e9 / SAMPLE for g in got]), threads=t,
                         error=None if got else err)
            if got:
                sc.log(f"  pread of the warm file, {t} threads: {sc.fmt_rate(s, ' GB/s')}")

    def throughput(self, ds, n, ne):
        """N: samples of the raw datasets, NE: of the JPEG q70 ones."""
        T = self.cores
        raw_h5, raw_lmdb = ds[("raw", "h5", n)], ds[("raw", "lmdb", n)]
        q_h5, q_lmdb = ds[("q70", "h5", ne)], ds[("q70", "lmdb", ne)]
        for shuffle in (False, True):
            g = f"uint8, {'shuffled' if shuffle else 'sequential'}"
            for path, fmt in ((raw_h5, "HDF5"), (raw_lmdb, "LMDB")):
                self.measure(g, f"libdata C, {fmt}, {T} threads", path,
                             lambda p=path: self.c_reader(p, shuffle, T, n),
                             tool="libdata C", fmt=fmt, threads=T)
            self.measure(g, "libdata C, HDF5, 1 thread", raw_h5,
                         lambda: self.c_reader(raw_h5, shuffle, 1, n), tool="libdata C",
                         fmt="HDF5", threads=1)
            c_run = (lambda: self.c_reader(raw_h5, shuffle, T, n))
            self.measure(g, f"libdata Python, HDF5, {T} threads", raw_h5,
                         lambda: self.py_reader("libdata-py", raw_h5, shuffle, T),
                         paired=c_run, tool="libdata Python", fmt="HDF5", threads=T)
            self.measure(g, f"libdata Python views, HDF5, {T} threads", raw_h5,
                         lambda: self.py_reader("libdata-py-views", raw_h5, shuffle, T),
                         paired=c_run, tool="libdata Python", fmt="HDF5", threads=T,
                         views=True)
            self.measure(g, "h5py " + ("fancy indexing" if shuffle else "slicing"), raw_h5,
                         lambda: self.py_reader("h5py", raw_h5, shuffle, 1), tool="h5py",
                         fmt="HDF5", threads=1)
            if not shuffle:
                self.measure(g, "h5py read_direct into a reused array", raw_h5,
                             lambda: self.py_reader("h5py-direct", raw_h5, False, 1),
                             tool="h5py", fmt="HDF5", threads=1)
            if shuffle:
                self.measure(g, "h5py per-sample loop (np.stack)", raw_h5,
                             lambda: self.py_reader("h5py-loop", raw_h5, True, 1),
                             tool="h5py", fmt="HDF5", threads=1)
            self.measure(g, "python-lmdb" + (" get per key" if shuffle else " cursor"),
                         raw_lmdb, lambda: self.py_reader("lmdb", raw_lmdb, shuffle, 1),
                         tool="python-lmdb", fmt="LMDB", threads=1)
            for w in (0, 2):
                self.measure(g, f"DataLoader over h5py, {w} workers", raw_h5,
                             lambda w=w: self.py_reader("dataloader", raw_h5, shuffle, w),
                             tool="DataLoader", fmt="HDF5", threads=max(w, 1))
        for shuffle in (False, True):
            g = f"JPEG q70 → uint8, {'shuffled' if shuffle else 'sequential'}"
            for t in sorted({1, T}):
                self.measure(g, f"libdata C, HDF5, {t} thread{'s' * (t > 1)}", q_h5,
                             lambda t=t: self.c_reader(q_h5, shuffle, t, ne, 1500 * t),
                             tool="libdata C", fmt="HDF5", threads=t)
            self.measure(g, f"libdata C, LMDB, {T} threads", q_lmdb,
                         lambda: self.c_reader(q_lmdb, shuffle, T, ne, 1500 * T), tool="libdata C",
                         fmt="LMDB", threads=T)
            self.measure(g, f"libdata Python, HDF5, {T} threads", q_h5,
                         lambda: self.py_reader("libdata-py", q_h5, shuffle, T),
                         tool="libdata Python", fmt="HDF5", threads=T)
            self.measure(g, "h5py slices + Pillow decode", q_h5,
                         lambda: self.py_reader("h5py", q_h5, shuffle, 1), tool="h5py",
                         fmt="HDF5", threads=1)
            self.measure(g, "python-lmdb " + ("get per key" if shuffle else "cursor")
                         + " + cv2.imdecode", q_lmdb,
                         lambda: self.py_reader("lmdb", q_lmdb, shuffle, 1),
                         tool="python-lmdb", fmt="LMDB", threads=1)
            if not shuffle:
                continue
            for w in (0, 2):
                self.measure(g, f"DataLoader over h5py + Pillow, {w} workers", q_h5,
                             lambda w=w: self.py_reader("dataloader", q_h5, True, w),
                             tool="DataLoader", fmt="HDF5", threads=max(w, 1))

    def cold(self, path, n, pairs):
        """Block-shuffled reading of PATH with its pages dropped from the cache, against dd of
        the same file, cold, in PAIRS interleaved pairs (module docstring). Rows: limits "dd of
        the file, cold" and "dd iflag=direct"; read group "uint8, block shuffle, cold cache",
        whose row holds the per-pair ratios (ratio_dd, ratio_direct) and the pairs."""
        T = self.cores
        size = os.path.getsize(path)

        def prepare(touch=True):
            sc.drop(path)
            try:  # resident bytes left (util-linux fincore), if it is installed
                out = subprocess.run(["fincore", "-b", "-n", "-o", "RES", path],
                                     capture_output=True, text=True, check=True).stdout
                if int(out.split()[0]) > size // 20:
                    raise sc.Failed(f"{path} stays in the page cache after DONTNEED")
            except (OSError, subprocess.CalledProcessError, ValueError, IndexError):
                pass
            if touch:  # BUILD/bench/baselines --touch (huge pages: ~1 s for 2.4 GB), or NumPy
                sc.run([self.baselines, "--touch", size] if self.baselines else
                       [sc.PY, os.path.abspath(__file__), "touch", size])

        def dd(*flags):
            prepare(touch=not flags)  # iflag=direct: no page cache, nothing to prepare
            _, dt, _ = sc.run(["dd", f"if={path}", "of=/dev/null", "bs=4M", *flags])
            return size / dt / 1e9

        def reader():
            prepare()
            sps, rss, anon = self.c_reader(path, False, T, n, epochs=1, order="block",
                                           warmup=False)
            return sps * SAMPLE / 1e9, sps, rss, anon
        runs = [("dd", dd), ("reader", reader), ("direct", lambda: dd("iflag=direct"))]
        t0 = time.perf_counter()
        got, err = [], None
        for k in range(pairs):
            one = {}
            for name, fn in (runs if k % 2 == 0 else runs[::-1]):
                r, e = sc.repeat(1, fn)
                if r:
                    one[name] = r[0]
                err = e or err
            if "dd" in one and "reader" in one:
                got.append(one)
                sc.log(f"    pair {k + 1}: dd {one['dd']:.2f} GB/s, reader "
                       f"{one['reader'][0]:.2f} GB/s = {one['reader'][0] / one['dd']:.2f}"
                       + (f"; dd iflag=direct {one['direct']:.2f} GB/s" if "direct" in one
                          else ""))
        dds = [g["dd"] for g in got]
        direct = [g["direct"] for g in got if "direct" in g]
        s = sc.summarize(dds)
        self.res.add("limit", "dd", "dd of the file, cold (bs=4M)", gbs=s,
                     sps=sc.summarize([g * 1e9 / SAMPLE for g in dds]), pairs=len(got),
                     file_gb=size / 1e9, error=None if got else err)
        self.res.add("limit", "dd_direct", "dd iflag=direct of the file (bs=4M, no page cache)",
                     gbs=sc.summarize(direct),
                     sps=sc.summarize([g * 1e9 / SAMPLE for g in direct]),
                     error=None if direct else err)
        row = self.res.add("read", "uint8, block shuffle, cold cache",
                           f"libdata C, HDF5, {T} threads", path=os.path.basename(path),
                           sps=sc.summarize([g["reader"][1] for g in got]),
                           gbs=sc.summarize([g["reader"][0] for g in got]),
                           rss_mb=sc.summarize([g["reader"][2] for g in got]),
                           anon_mb=sc.summarize([g["reader"][3] for g in got]),
                           ratio_dd=sc.summarize([g["reader"][0] / g["dd"] for g in got]),
                           ratio_direct=sc.summarize([g["reader"][0] / g["direct"] for g in got
                                                      if "direct" in g]),
                           pairs=[{"dd": g["dd"], "reader": g["reader"][0],
                                   "direct": g.get("direct")} for g in got],
                           file_gb=size / 1e9, error=None if got else err, tool="libdata C",
                           fmt="HDF5", threads=T)
        rd = row["ratio_dd"]
        sc.log(f"  {'uint8, block shuffle, cold':30} {'libdata C, HDF5':42} "
               f"{sc.fmt_rate(row['sps'], ' samples/s'):>34}  [{time.perf_counter() - t0:.1f} s]"
               + (f"\n  reader / dd, per pair: median {rd['median']:.2f} ({rd['min']:.2f}-"
                  f"{rd['max']:.2f}); dd {s['median']:.2f} ({s['min']:.2f}-{s['max']:.2f}) GB/s"
                  if rd else ""))

    def memory(self, ds, sizes):
        """Peak RSS of one shuffled epoch (uint8) against dataset size."""
        T = self.cores
        for n in sizes:
            h5, lm = ds[("raw", "h5", n)], ds[("raw", "lmdb", n)]
            gb = _size(h5) / 2**30
            runs = [
                ("libdata C, HDF5", h5, lambda: self.c_reader(h5, True, T, n, epochs=1)),
                ("libdata C, LMDB", lm, lambda: self.c_reader(lm, True, T, n, epochs=1)),
                ("libdata Python, HDF5", h5,
                 lambda: self.py_reader("libdata-py", h5, True, T, n, 1e9)),
                # fancy indexing runs at ~100 samples/s: 2 batches (its memory is flat)
                ("h5py fancy indexing", h5,
                 lambda: self.py_reader("h5py", h5, True, 1, min(n, 2 * self.batch), 1e9)),
                ("h5py per-sample loop", h5,
                 lambda: self.py_reader("h5py-loop", h5, True, 1, n, 1e9)),
                ("python-lmdb get per key", lm,
                 lambda: self.py_reader("lmdb", lm, True, 1, n, 1e9)),
                ("DataLoader over h5py, 2 workers", h5,
                 lambda: self.py_reader("dataloader", h5, True, 2, n, 1e9)),
            ]
            for name, path, fn in runs:
                def go(fn=fn, path=path):
                    sc.warm(path)
                    return fn()
                t0 = time.perf_counter()
                got, err = sc.repeat(1, go)
                wall = time.perf_counter() - t0
                self.res.add("memread", name, f"{n}", samples=n, dataset_gib=gb,
                             rss_mb=sc.summarize([g[1] for g in got]),
                             anon_mb=sc.summarize([g[2] for g in got]),
                             sps=sc.summarize([g[0] for g in got]), error=None if got else err)
                sc.log(f"  read {n:6d} samples ({gb:5.2f} GiB) {name:34} peak RSS "
                       f"{got[0][1] if got else float('nan'):8.1f} MiB, private "
                       f"{got[0][2] if got else float('nan'):8.1f} MiB  [{wall:.1f} s]")


def extract_jpegs(q_h5, outdir, count=64):
    """The first COUNT JPEGs of an encoded libdata HDF5 as files (the decode-rate input)."""
    import h5py
    os.makedirs(outdir, exist_ok=True)
    with h5py.File(q_h5, "r") as f:
        off, enc = f["offsets"][:], f["encoded"]
        for i in range(min(count, len(off) - 1)):
            with open(os.path.join(outdir, f"{i:03d}.jpg"), "wb") as g:
                g.write(enc[int(off[i]):int(off[i + 1])].tobytes())
    return outdir


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "worker":
        kind, path, order, batch, seconds = sys.argv[2:7]
        threads = int(sys.argv[7]) if len(sys.argv) > 7 else 1
        mx = int(sys.argv[8]) if len(sys.argv) > 8 else 0
        worker(kind, path, order, int(batch), float(seconds), threads, mx)
    elif len(sys.argv) == 3 and sys.argv[1] == "memcpy":
        memcpy_worker(int(sys.argv[2]))
    elif len(sys.argv) == 3 and sys.argv[1] == "touch":
        np.ones(int(sys.argv[2]), np.uint8)  # faulted in, then freed at exit
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
