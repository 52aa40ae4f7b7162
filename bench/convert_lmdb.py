#!/usr/bin/python3
"""Benchmark: folder of JPEGs -> Caffe LMDB at 224x224, dataconv against the Pillow +
python-lmdb script a user would write, side by side in one run.

Usage:
  bench/convert_lmdb.py [--dataconv PATH] [--src DIR] [--n N] [--threads J] [--repeat R]

  --dataconv  the dataconv binary (default: $DATACONV, then build*/dataconv, then PATH)
  --src       a folder tree of images (class sub-folders). Default: a set of N JPEGs made
              from the test fixtures ($LD_TEST_DATA/photos, or build/testdata/photos) in a
              temporary directory, 4 classes.
  --n         images in the generated set (default 480)
  --threads   dataconv -j for the multi-thread run (default: all cores)
  --repeat    runs of each contender; the best time is kept (default 3)

Both contenders do the same work: read each file, decode, resize to 224x224 (stretch,
convert_imageset's --resize_height/--resize_width), store raw BGR CHW pixels in a Datum with
its label under key "%08d_<relative path>", commit every 1000 records. The baseline is the
script in `pillow_lmdb()` below: Pillow's decode and default resize, numpy for BGR/CHW,
python3-protobuf for the Datum, python3-lmdb with a fixed 1 GiB map.

The files are read once right before each measurement so both run from the page cache
(the kernel pages out idle memory after about a minute on our machines). Reported: images/s
for each, and the ratio per core (dataconv -j1 vs the single-threaded script; target >= 2x)
and for dataconv with all cores.
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time

import lmdb
import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
from lmdb_caffe_pb import Datum  # noqa: E402


def find_dataconv(arg):
    for c in [arg, os.environ.get("DATACONV")] + sorted(glob.glob(os.path.join(ROOT, "build*",
                                                                                "dataconv"))):
        if c and os.access(c, os.X_OK):
            return c
    return shutil.which("dataconv")


def list_images(src):
    """(relative path, label) in the order dataconv uses: classes sorted, files sorted."""
    classes = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d))
                     and not d.startswith("."))
    items = []
    for label, c in enumerate(classes):
        for dirpath, dirs, files in os.walk(os.path.join(src, c)):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            for f in files:
                if not f.startswith(".") and f.lower().endswith((".jpg", ".jpeg", ".png")):
                    items.append((os.path.relpath(os.path.join(dirpath, f), src), label))
    items.sort()
    return items


def make_set(n, tmp):
    """N JPEGs (q90, about 500x375) from the fixture photos, in 4 class folders."""
    cands = [os.environ.get("LD_TEST_DATA", ""), os.path.join(ROOT, "build", "testdata")]
    cands += sorted(glob.glob(os.path.join(ROOT, "build*", "testdata")))
    photos = []
    for c in cands:
        photos = sorted(glob.glob(os.path.join(c, "photos", "*.jpg")))
        if photos:
            break
    if not photos:
        sys.exit("no fixture photos: run tests/data/make_fixtures.py BUILD/testdata first")
    src = os.path.join(tmp, "src")
    rng = np.random.default_rng(0)
    for i in range(n):
        im = Image.open(photos[i % len(photos)]).convert("RGB")
        if i >= len(photos):  # a different crop so files differ
            dx, dy = rng.integers(0, 24, 2)
            im = im.crop((dx, dy, im.width - 24 + dx, im.height - 24 + dy))
        d = os.path.join(src, f"class{i % 4}")
        os.makedirs(d, exist_ok=True)
        im.save(os.path.join(d, f"img{i:05d}.jpg"), quality=90)
    return src


def warm(src, items):
    for rel, _ in items:
        with open(os.path.join(src, rel), "rb") as f:
            f.read()


def pillow_lmdb(src, items, out):
    """What a user would write with Pillow and python-lmdb."""
    env = lmdb.open(out, map_size=1 << 30)
    txn = env.begin(write=True)
    for i, (rel, label) in enumerate(items):
        im = Image.open(os.path.join(src, rel)).convert("RGB").resize((224, 224))
        a = np.asarray(im)[:, :, ::-1].transpose(2, 0, 1)  # RGB HWC -> BGR CHW
        d = Datum(channels=3, height=224, width=224, data=a.tobytes(), label=label,
                  encoded=False)
        txn.put(f"{i:08d}_{rel}".encode(), d.SerializeToString())
        if (i + 1) % 1000 == 0:
            txn.commit()
            txn = env.begin(write=True)
    txn.commit()
    env.close()


def entries(db):
    env = lmdb.open(db, readonly=True, lock=False)
    n = env.stat()["entries"]
    env.close()
    return n


def best_of(repeat, fn, src, items, out):
    best = None
    for _ in range(repeat):
        shutil.rmtree(out, ignore_errors=True)
        warm(src, items)
        t = time.perf_counter()
        fn(out)
        dt = time.perf_counter() - t
        best = dt if best is None else min(best, dt)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataconv")
    ap.add_argument("--src")
    ap.add_argument("--n", type=int, default=480)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    dc = find_dataconv(a.dataconv)
    if not dc:
        sys.exit("dataconv not found: build it or pass --dataconv / set DATACONV")
    tmp = tempfile.mkdtemp(prefix="ld_bench_lmdb_")
    try:
        src = a.src or make_set(a.n, tmp)
        items = list_images(src)
        n = len(items)
        out = os.path.join(tmp, "out.lmdb")

        def run_dc(j):
            def go(o):
                p = subprocess.run([dc, src, o, "--resize", "224", "-j", str(j)],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                if p.returncode:
                    sys.exit(f"dataconv failed ({p.returncode}):\n{p.stderr}")
            return go

        t_py = best_of(a.repeat, lambda o: pillow_lmdb(src, items, o), src, items, out)
        assert entries(out) == n
        t_1 = best_of(a.repeat, run_dc(1), src, items, out)
        assert entries(out) == n, f"dataconv wrote {entries(out)} records, expected {n}"
        t_j = best_of(a.repeat, run_dc(a.threads), src, items, out)
        load = os.getloadavg()[0]
        print(f"images: {n} from {src}, 224x224 raw BGR CHW, best of {a.repeat}, "
              f"{os.cpu_count()} cores, load average {load:.2f} (other work skews -jN)")
        print(f"pillow + python-lmdb (1 core): {n / t_py:8.1f} img/s  ({t_py:.2f} s)")
        print(f"dataconv -j1                 : {n / t_1:8.1f} img/s  ({t_1:.2f} s)")
        print(f"dataconv -j{a.threads:<2d}                : {n / t_j:8.1f} img/s  ({t_j:.2f} s)")
        print(f"ratio per core (dataconv -j1 / pillow): {t_py / t_1:.2f}x (target >= 2x)")
        print(f"ratio with {a.threads} threads: {t_py / t_j:.2f}x")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
