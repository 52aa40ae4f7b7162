#!/usr/bin/python3
"""Conversion speed: dataconv against the Pillow + h5py script users write, in one run.

Usage: bench/convert_bench.py [--n 1000] [--dataconv build/dataconv] [--work /tmp/ld_bench]

Converts the same folder of real-photo JPEGs (about 500x375) to 224x224, raw and JPEG q70,
with dataconv on 1 thread and on all cores, and with a single-process Pillow + h5py script.
Prints images/s, peak RSS and the ratios (dataconv per core vs Pillow).
"""
import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

PILLOW_SCRIPT = r'''
import io, os, sys
import h5py, numpy as np
from PIL import Image
src, out, quality = sys.argv[1], sys.argv[2], int(sys.argv[3])
classes = sorted(d for d in os.listdir(src) if not d.startswith("."))
files = [(os.path.join(src, c, f), i) for i, c in enumerate(classes)
         for f in sorted(os.listdir(os.path.join(src, c))) if f.endswith(".jpg")]
with h5py.File(out, "w") as h5:
    h5.create_dataset("label", data=np.array([l for _, l in files], dtype=np.int32))
    if quality == 0:
        data = h5.create_dataset("data", (len(files), 3, 224, 224), dtype=np.uint8,
                                 chunks=(6, 3, 224, 224))
        for i, (p, _) in enumerate(files):
            im = Image.open(p).convert("RGB").resize((224, 224))
            data[i] = np.asarray(im)[:, :, ::-1].transpose(2, 0, 1)
    else:
        blobs = h5.create_dataset("encoded", (len(files),), dtype=h5py.vlen_dtype(np.uint8))
        for i, (p, _) in enumerate(files):
            im = Image.open(p).convert("RGB").resize((224, 224))
            b = io.BytesIO()
            im.save(b, format="JPEG", quality=quality)
            blobs[i] = np.frombuffer(b.getvalue(), dtype=np.uint8)
'''


def timed(cmd):
    """Run cmd, return (seconds, peak RSS in MiB of the child)."""
    t = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, capture_output=True, text=True)
    dt = time.perf_counter() - t
    if p.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{p.stderr}")
    rss_kb = int(p.stderr.strip().splitlines()[-1])
    return dt, rss_kb / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--dataconv", default=os.path.join(HERE, "..", "build", "dataconv"))
    ap.add_argument("--work", default="/tmp/ld_bench")
    a = ap.parse_args()
    photos = os.path.join(a.work, f"photos{a.n}")
    subprocess.run(["/usr/bin/python3", os.path.join(HERE, "make_photos.py"), photos, str(a.n)],
                   check=True)
    script = os.path.join(a.work, "pillow_h5py.py")
    with open(script, "w") as f:
        f.write(PILLOW_SCRIPT)
    # Warm the page cache right before measuring (the kernel evicts idle pages).
    subprocess.run(f"cat {photos}/*/*.jpg > /dev/null", shell=True, check=True)
    cores = os.cpu_count()
    rows = []
    for label, q in (("raw", 0), ("jpeg q70", 70)):
        out = os.path.join(a.work, "out.h5")
        qargs = ["--quality", str(q)] if q else []
        res = {}
        for j in (1, cores):
            dt, rss = timed([a.dataconv, photos, out, "--resize", "224", "-j", str(j), "--quiet"]
                            + qargs)
            res[f"dataconv -j{j}"] = (a.n / dt, rss)
        dt, rss = timed(["/usr/bin/python3", script, photos, out, str(q)])
        res["Pillow + h5py"] = (a.n / dt, rss)
        os.unlink(out)
        rows.append((label, res))
    print(f"\nconversion of {a.n} photos (~500x375 JPEG) to 224x224, {cores} cores")
    print(f"{'storage':10} {'tool':16} {'images/s':>9} {'peak RSS MiB':>13}")
    for label, res in rows:
        for tool, (ips, rss) in res.items():
            print(f"{label:10} {tool:16} {ips:9.0f} {rss:13.1f}")
    print("\nratios")
    for label, res in rows:
        pil = res["Pillow + h5py"][0]
        one = res["dataconv -j1"][0]
        allc = res[f"dataconv -j{cores}"][0]
        print(f"{label:10} dataconv 1 thread / Pillow: {one / pil:4.1f}x   "
              f"all cores / Pillow: {allc / pil:4.1f}x   scaling -j{cores}: {allc / one:4.2f}x")


if __name__ == "__main__":
    main()
