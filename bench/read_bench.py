#!/usr/bin/python3
"""Reader benchmark: libdata's reader side by side with memcpy, h5py and a PyTorch DataLoader,
in one run, printing ratios (the targets of issue 4).

  /usr/bin/python3 bench/read_bench.py [--build DIR] [--work DIR] [--n 8000] [--batch 256]
                                       [--threads 2] [--photos DIR] [--quick]

--build is a CMake build directory holding dataconv (default: build-reader, then build): the C
reader is measured by `dataconv bench`, the libjpeg-turbo and access-method baselines by
BUILD/bench/baselines (bench/baselines.c, built with -DLIBDATA_BUILD_BENCH=ON). Datasets are
made once in --work
(default /tmp/ld_bench): raw.h5, N x 3x224x224 uint8 in libdata's layout (1 MiB chunks), and
enc.h5, 2000 JPEG photos (the fixture photos' own bytes, 500x375 q90). Each measurement reads
its file into the page cache first (cat > /dev/null): the kernel drops idle pages after about a
minute, so stale caches would favour whichever ran first.
"""
import argparse
import glob
import io
import json
import os
import re
import subprocess
import sys
import time

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import suite_common as sc  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
C, H, W = 3, 224, 224


def warm(path):
    subprocess.run(f"cat '{path}' > /dev/null", shell=True, check=True)


def make_raw(path, n):
    if os.path.exists(path):
        with h5py.File(path, "r") as f:
            if f["data"].shape[0] == n:
                return
    k = max(1, (1 << 20) // (C * H * W))
    rng = np.random.default_rng(1)
    base = rng.integers(0, 256, size=(C, H, W + 256), dtype=np.uint8)
    with h5py.File(path + ".tmp", "w") as f:
        f.attrs["format"] = np.bytes_("libdata")
        f.attrs["channel_order"] = np.bytes_("BGR")
        d = f.create_dataset("data", (n, C, H, W), np.uint8, chunks=(k, C, H, W))
        for s in range(0, n, 240):
            e = min(n, s + 240)
            d[s:e] = np.stack([base[:, :, i % 256:i % 256 + W] for i in range(s, e)])
        f.create_dataset("label", data=(np.arange(n) % 1000).astype(np.int32))
    os.rename(path + ".tmp", path)


def make_encoded(path, photos, n=2000):
    if os.path.exists(path):
        return
    blobs = [open(p, "rb").read() for p in photos]
    from PIL import Image
    shapes = []
    for b in blobs:
        im = Image.open(io.BytesIO(b))
        shapes.append((3, im.height, im.width))
    seq = [blobs[i % len(blobs)] for i in range(n)]
    off = np.zeros(n + 1, np.uint64)
    off[1:] = np.cumsum([len(b) for b in seq])
    with h5py.File(path + ".tmp", "w") as f:
        f.attrs["format"] = np.bytes_("libdata")
        f.attrs["storage"] = np.bytes_("encoded")
        f.create_dataset("encoded", data=np.frombuffer(b"".join(seq), np.uint8),
                         chunks=(1 << 20,), maxshape=(None,))
        f.create_dataset("offsets", data=off)
        f.create_dataset("shape", data=np.array([shapes[i % len(blobs)] for i in range(n)],
                                                np.uint32))
        f.create_dataset("label", data=np.zeros(n, np.int32))
    os.rename(path + ".tmp", path)


def find_tools(build):
    dataconv = os.path.join(build, "dataconv")
    baselines = os.path.join(build, "bench", "baselines")
    for exe, how in ((dataconv, "the 'dataconv' target"),
                     (baselines, "the 'baselines' target, configured with -DLIBDATA_BUILD_BENCH=ON")):
        if not os.access(exe, os.X_OK):
            sys.exit(f"no {exe} in {build}: build {how}")
    return dataconv, baselines


ORDERS = {0: "seq", 1: "shuffle", 2: "block"}


def bench_once(dataconv, path, batch, order=0, threads=0, epochs=1, dtype=0, crop=None,
               budget=0, dct=0):
    """One `dataconv bench` run: one untimed epoch, then EPOCHS timed ones. Returns the rates
    and what the reader chose, from its output; peak RSS from /usr/bin/time (suite_common)."""
    args = [dataconv, "bench", path, "--batch", batch, "--order", ORDERS[order],
            "-j", threads, "--epochs", epochs + 1]
    if dtype:
        args += ["--dtype", "f32"]
    if crop:
        args += ["--crop", f"{crop[0]}x{crop[1]}"]
    if budget:
        args += ["--memory", budget]
    if dct:
        args += ["--dct-scale"]
    out, _, rss = sc.run(args)
    head = re.search(r"batch (\d+) x (\d+)x(\d+)x(\d+) (\w+); (\d+) threads, prefetch (\d+)",
                     out)
    if not head:
        sys.exit(f"unexpected `dataconv bench` output:\n{out}")
    c, h, w = (int(head.group(k)) for k in (2, 3, 4))
    sample = c * h * w * (4 if head.group(5) == "float32" else 1)
    samples = seconds = batches = 0
    for m in re.finditer(r"^epoch (\d+): (\d+) batches, (\d+) samples in ([\d.]+) s", out, re.M):
        if int(m.group(1)) > 0:  # epoch 0 is the warm-up
            batches += int(m.group(2))
            samples += int(m.group(3))
            seconds += float(m.group(4))
    return {"samples": samples, "seconds": seconds, "samples_per_s": samples / seconds,
            "MB_per_s": samples * sample / seconds / 1e6,
            "ms_per_batch": seconds * 1e3 / max(batches, 1), "threads": int(head.group(6)),
            "prefetch": int(head.group(7)), "peak_rss_MB": rss}


def run_bench(dataconv, path, reps=2, **opts):
    """Best of `reps` runs: the machine is shared, the best run is the least disturbed."""
    runs = []
    for _ in range(reps):
        warm(path)
        runs.append(bench_once(dataconv, path, **opts))
    return max(runs, key=lambda r: r["samples_per_s"])


def best(fn, reps=3):
    return min(fn() for _ in range(reps))


def memcpy_gbs():
    a = np.ones(256 << 20, np.uint8)
    b = np.empty_like(a)
    np.copyto(b, a)  # fault b in

    def once():
        t = time.perf_counter()
        np.copyto(b, a)
        return time.perf_counter() - t
    return a.nbytes / best(once, 5) / 1e9


def h5py_seq_gbs(path, batch):
    warm(path)
    with h5py.File(path, "r") as f:
        d = f["data"]
        n = d.shape[0]
        buf = np.empty((batch,) + d.shape[1:], np.uint8)
        d.read_direct(buf, np.s_[0:batch], np.s_[0:batch])
        t = time.perf_counter()
        done = 0
        for s in range(0, n - batch + 1, batch):
            d.read_direct(buf, np.s_[s:s + batch], np.s_[0:batch])
            done += batch
        dt = time.perf_counter() - t
    return done * buf[0].nbytes / dt / 1e9


def h5py_random_sps(path, count):
    warm(path)
    with h5py.File(path, "r") as f:
        d = f["data"]
        idx = np.random.default_rng(2).permutation(d.shape[0])[:count]
        t = time.perf_counter()
        for i in idx:
            d[int(i)]
        dt = time.perf_counter() - t
    return count / dt


class H5Dataset:
    """The usual way: a torch Dataset over h5py, opened lazily in each worker."""

    def __init__(self, path):
        self.path = path
        with h5py.File(path, "r") as f:
            self.n = f["data"].shape[0]
        self.f = None

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if self.f is None:
            self.f = h5py.File(self.path, "r")
        return self.f["data"][i], int(self.f["label"][i])


def torch_sps(path, batch, batches):
    try:
        import torch
        from torch.utils.data import DataLoader
    except ImportError:
        return None
    torch.set_num_threads(1)
    warm(path)
    dl = DataLoader(H5Dataset(path), batch_size=batch, shuffle=True, num_workers=2,
                    persistent_workers=False)
    it = iter(dl)
    next(it)  # workers started, first batch out
    t = time.perf_counter()
    got = 0
    for _ in range(batches):
        x, y = next(it)
        got += x.shape[0]
    dt = time.perf_counter() - t
    del it, dl
    return got / dt


def pil_decode_sps(path, count=300):
    from PIL import Image
    warm(path)
    with h5py.File(path, "r") as f:
        off, enc = f["offsets"][:], f["encoded"]
        blobs = [enc[int(off[i]):int(off[i + 1])].tobytes() for i in range(min(count, 48))]
    for b in blobs[:4]:
        Image.open(io.BytesIO(b)).convert("RGB")

    def once():
        t = time.perf_counter()
        for k in range(count):
            Image.open(io.BytesIO(blobs[k % len(blobs)])).convert("RGB").tobytes()
        return time.perf_counter() - t
    return count / best(once, 3)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=None)
    ap.add_argument("--work", default="/tmp/ld_bench")
    ap.add_argument("--n", type=int, default=8000)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--photos", default=None)
    ap.add_argument("--quick", action="store_true", help="fewer repetitions, no torch")
    a = ap.parse_args()
    build = a.build or next((d for d in (os.path.join(ROOT, "build-reader"),
                                         os.path.join(ROOT, "build"))
                             if os.path.exists(os.path.join(d, "dataconv"))), None)
    if not build:
        sys.exit("give --build DIR (a build directory with dataconv)")
    os.makedirs(a.work, exist_ok=True)
    photos = sorted(glob.glob(os.path.join(a.photos or os.path.join(build, "testdata/photos"),
                                           "*.jpg")))
    if not photos:
        sys.exit("no photos: run tests/data/make_fixtures.py BUILD/testdata or give --photos")
    exe, baselines = find_tools(build)
    raw, enc = os.path.join(a.work, "raw.h5"), os.path.join(a.work, "enc.h5")
    make_raw(raw, a.n)
    make_encoded(enc, photos)
    sample_mb = C * H * W / 1e6
    T, B = a.threads, a.batch
    rows = []

    def row(name, sps=None, mbs=None, extra=""):
        rows.append((name, sps, mbs, extra))
        s = f"{sps:10.0f}" if sps else " " * 10
        m = f"{mbs:9.0f}" if mbs else " " * 9
        print(f"  {name:48s} {s} samples/s {m} MB/s  {extra}", flush=True)

    print(f"dataset {raw}: {a.n} x {C}x{H}x{W} uint8 ({a.n * sample_mb / 1e3:.2f} GB), batch {B}, "
          f"{T} threads, {os.cpu_count()} cores")
    mc = memcpy_gbs()
    row("memcpy (numpy copyto, 1 core)", mc * 1e3 / sample_mb, mc * 1e3)
    hs = max(h5py_seq_gbs(raw, B) for _ in range(2))
    row("h5py read_direct, sequential slices", hs * 1e3 / sample_mb, hs * 1e3)
    seq = run_bench(exe, raw, batch=B, order=0, threads=T, epochs=2)
    row("libdata sequential uint8", seq["samples_per_s"], seq["MB_per_s"],
        f"{seq['ms_per_batch']:.1f} ms/batch, peak RSS {seq['peak_rss_MB']:.0f} MB")
    seq1 = run_bench(exe, raw, batch=B, order=0, threads=1, epochs=2)
    row("libdata sequential uint8, 1 thread", seq1["samples_per_s"], seq1["MB_per_s"])
    hr = max(h5py_random_sps(raw, min(a.n, 4000)) for _ in range(2))
    row("h5py per-sample random reads", hr, hr * sample_mb)
    shf = run_bench(exe, raw, batch=B, order=1, threads=T, epochs=2)
    row("libdata shuffled uint8", shf["samples_per_s"], shf["MB_per_s"],
        f"{shf['ms_per_batch']:.1f} ms/batch, peak RSS {shf['peak_rss_MB']:.0f} MB")
    blk = run_bench(exe, raw, batch=B, order=2, threads=T, epochs=2)
    row("libdata block-shuffled uint8", blk["samples_per_s"], blk["MB_per_s"])
    flt = run_bench(exe, raw, batch=B, order=1, threads=T, epochs=1, dtype=1, crop=(200, 200))
    row("libdata shuffled float32, crop 200", flt["samples_per_s"], flt["MB_per_s"])
    bud = run_bench(exe, raw, batch=B, order=1, threads=T, epochs=1, budget=64 << 20)
    row("libdata shuffled uint8, 64 MiB budget", bud["samples_per_s"], bud["MB_per_s"],
        f"prefetch {bud['prefetch']}, peak RSS {bud['peak_rss_MB']:.0f} MB")
    ts = None if a.quick else torch_sps(raw, B, max(4, min(20, a.n // B - 2)))
    if ts:  # best of two, like everything else
        ts = max(ts, torch_sps(raw, B, max(4, min(20, a.n // B - 2))))
    if ts:
        row("PyTorch DataLoader over h5py, 2 workers", ts, ts * sample_mb)
    pil = pil_decode_sps(enc)
    row("PIL (libjpeg-turbo) decode 500x375, 1 thread", pil, None)
    tj = max(json.loads(subprocess.run([baselines, "--decode", "2"] + photos, check=True,
                                       capture_output=True, text=True).stdout)["images_per_s"]
             for _ in range(2))
    row("libjpeg-turbo decode 500x375, 1 thread", tj, None)
    e1 = run_bench(exe, enc, batch=64, order=1, threads=1, epochs=2, crop=(224, 224))
    row("libdata encoded JPEG, crop 224, 1 thread", e1["samples_per_s"], None)
    eT = run_bench(exe, enc, batch=64, order=1, threads=T, epochs=2, crop=(224, 224))
    row(f"libdata encoded JPEG, crop 224, {T} threads", eT["samples_per_s"], None,
        f"peak RSS {eT['peak_rss_MB']:.0f} MB")
    eD = run_bench(exe, enc, batch=64, order=1, threads=T, epochs=2, crop=(224, 224), dct=1)
    row(f"libdata encoded JPEG, DCT-scaled, {T} threads", eD["samples_per_s"], None)

    print("\nratios (targets from issue 4):")
    print(f"  sequential uint8 / memcpy bandwidth      {seq['MB_per_s'] / (mc * 1e3):6.2f}"
          "   (target >= 0.60)")
    print(f"  shuffled uint8 / h5py per-sample random  {shf['samples_per_s'] / hr:6.2f}"
          "   (target >= 3)")
    if ts:
        print(f"  shuffled uint8 / DataLoader 2 workers    {shf['samples_per_s'] / ts:6.2f}"
              "   (target >= 10)")
    else:
        print("  shuffled uint8 / DataLoader 2 workers       -   (torch not available / --quick)")
    print(f"  encoded, {T} threads / (libjpeg-turbo 1 thread x {T})  "
          f"{eT['samples_per_s'] / (tj * T):5.2f}   (target >= 0.80)")
    print(f"  encoded, {T} threads / (PIL 1 thread x {T})  {eT['samples_per_s'] / (pil * T):6.2f}")
    print(f"  encoded, {T} threads / (libdata 1 thread x {T}) "
          f"{eT['samples_per_s'] / (e1['samples_per_s'] * T):5.2f}")
    if not a.quick:
        print("\naccess methods, 1 thread, first GiB of raw.h5 warm (why h5_store.c uses pread):")
        warm(raw)
        out = subprocess.run([baselines, "--io", raw, str(C * H * W)], check=True,
                             capture_output=True, text=True).stdout
        print("".join("  " + l + "\n" for l in out.strip().splitlines()[-7:]), end="")


if __name__ == "__main__":
    main()
