#!/usr/bin/python3
"""Large photos: dataconv --decode-scale auto against exact, speed and PSNR (issue 30, item 2).

    bench/decode_scale.py [--build DIR] [--work DIR] [--n 320] [--reps 3] [-j 1]
                          [--configs 224:squash,256:crop,512:crop]

Makes N distinct camera-size JPEGs (>= 1920 px wide, quality 92) once into WORK/big<N>: crops at
native resolution of the photographs and wallpapers Debian's mate-backgrounds and
plasma-workspace-wallpapers ship (every JPEG of theirs >= 1920 wide, deduplicated), 4:3, 3:2 or
16:9, mirrored at random; every 4th is stored turned by 90 degrees with EXIF orientation 6 or 8
saying how to show it (camera portrait photos), so the decoder's orientation path is measured
too. Then, per config (output size and resize mode), converts them with -j J (default 1:
per-core speed, least disturbed by other work on the machine), exact and auto interleaved REPS
times after warming the files, and prints: img/s (median and range) of each, the ratio
auto/exact (median of the per-pair ratios, and range), the downscale factor (source pixels per
output pixel along the shorter kept side) range, the DCT scales auto used (from dataconv -v), and
the PSNR of every auto sample against its exact sample (median, 10th percentile, minimum).
Needs python3-numpy, python3-pil, python3-h5py. bench/run --only decode_scale runs it too.
"""
import argparse
import glob
import hashlib
import os
import re
import resource
import statistics
import subprocess
import sys
import time

import h5py
import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SOURCES = ["/usr/share/backgrounds", "/usr/share/wallpapers"]
PACKAGES = ["mate-backgrounds", "plasma-workspace-wallpapers"]


def sources():
    """Every distinct JPEG >= 1920 wide of the wallpaper packages, in a fixed order."""
    seen, out = set(), []
    for root in SOURCES:
        for dp, dn, fn in sorted(os.walk(root)):
            dn.sort()
            for f in sorted(fn):
                p = os.path.join(dp, f)
                if not f.lower().endswith((".jpg", ".jpeg")) or os.path.islink(p):
                    continue
                try:
                    with Image.open(p) as im:
                        if im.format != "JPEG" or im.size[0] < 1920:
                            continue
                except OSError:
                    continue
                h = hashlib.sha1(open(p, "rb").read()).hexdigest()
                if h not in seen:
                    seen.add(h)
                    out.append(p)
    return out


def make(outdir, n):
    """N distinct large JPEGs in OUTDIR/big/ (reused when complete). Returns OUTDIR."""
    stamp = os.path.join(outdir, f".complete-{n}")
    if os.path.exists(stamp):
        return outdir
    src = sources()
    if len(src) < 4:
        sys.exit(f"decode_scale: {len(src)} JPEGs >= 1920 wide found under {SOURCES}: install "
                 + " ".join(PACKAGES))
    rng = np.random.default_rng(30)
    d = os.path.join(outdir, "big")
    os.makedirs(d, exist_ok=True)
    made = set()
    cache = {}
    i = j = 0
    while i < n:
        p = src[j % len(src)]  # j, not i: a crop made already moves on to the next source
        j += 1
        if p not in cache:
            cache[p] = Image.open(p).convert("RGB")
        im = cache[p]
        aw, ah = [(4, 3), (3, 2), (16, 9)][int(rng.integers(3))]
        wmax = min(im.width, im.height * aw // ah)
        if wmax < 1920:
            aw, ah = 16, 9
            wmax = min(im.width, im.height * aw // ah)
        w = int(rng.integers(1920, wmax + 1))
        h = w * ah // aw
        x, y = int(rng.integers(im.width - w + 1)), int(rng.integers(im.height - h + 1))
        mirror = int(rng.integers(2))
        key = (p, x, y, w, h, mirror, i % 4 == 3)
        if key in made:
            continue
        made.add(key)
        out = im.crop((x, y, x + w, y + h))
        if mirror:
            out = out.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
        kw = {}
        if i % 4 == 3:  # stored turned, shown upright by the EXIF orientation
            o = 6 if i % 8 == 3 else 8
            out = out.transpose(Image.Transpose.ROTATE_90 if o == 6 else Image.Transpose.ROTATE_270)
            ex = Image.Exif()
            ex[0x0112] = o
            kw["exif"] = ex.tobytes()
        out.save(os.path.join(d, f"big{i:04d}.jpg"), quality=92, **kw)
        i += 1
    with open(os.path.join(outdir, "sources.txt"), "w") as f:
        f.write("\n".join(src) + "\n")
    open(stamp, "w").close()
    return outdir


def displayed_sizes(folder):
    out = []
    for p in sorted(glob.glob(os.path.join(folder, "big", "*.jpg"))):
        with Image.open(p) as im:
            w, h = im.size
            o = im.getexif().get(0x0112, 1)
        out.append((h, w) if o >= 5 else (w, h))
    return out


def factor(w, h, size, mode):
    """Source pixels per output pixel, on the axis the resize shrinks least."""
    if mode == "crop":
        return min(w, h) / size
    return min(w / size, h / size)  # squash to size x size


def warm(folder):
    for p in glob.glob(os.path.join(folder, "big", "*.jpg")):
        with open(p, "rb") as f:
            while f.read(1 << 20):
                pass


def convert(dataconv, folder, out, size, mode, policy, threads):
    if os.path.exists(out):
        os.remove(out)
    cmd = [dataconv, "convert", "-v", f"-j{threads}", "--resize", str(size), "--mode", mode,
           "--decode-scale", policy, folder, out]
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit(f"decode_scale: {' '.join(cmd)} failed:\n{p.stderr}")
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return wall, cpu, p.stderr


def psnr(a, b):
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return 99.0 if mse == 0 else min(99.0, 10 * np.log10(255.0 ** 2 / mse))


def rng_text(v, fmt="{:.0f}"):
    return f"{fmt.format(statistics.median(v))} ({fmt.format(min(v))}-{fmt.format(max(v))})"


def measure(dataconv, folder, work, configs, reps, threads, log=print):
    """Returns one dict per config with the figures the report prints."""
    n = len(glob.glob(os.path.join(folder, "big", "*.jpg")))
    sizes = displayed_sizes(folder)
    rows = []
    for size, mode in configs:
        out = {p: os.path.join(work, f"ds_{size}_{mode}_{p}.h5") for p in ("exact", "auto")}
        rate = {"exact": [], "auto": []}
        cpu_rate = {"exact": [], "auto": []}
        ratio = []
        scales = ""
        warm(folder)
        convert(dataconv, folder, out["exact"], size, mode, "exact", threads)  # warm-up
        for k in range(reps):
            order = ("exact", "auto") if k % 2 == 0 else ("auto", "exact")
            got = {}
            for pol in order:
                wall, cpu, err = convert(dataconv, folder, out[pol], size, mode, pol, threads)
                got[pol] = n / wall
                rate[pol].append(n / wall)
                cpu_rate[pol].append(n / cpu)
                m = re.search(r"decode scale auto: (.*?), each", err)
                if pol == "auto" and m:
                    scales = m.group(1)
            ratio.append(got["auto"] / got["exact"])
        with h5py.File(out["exact"], "r") as fe, h5py.File(out["auto"], "r") as fa:
            de, da = fe["data"], fa["data"]
            ps = [psnr(de[i], da[i]) for i in range(de.shape[0])]
        fac = [factor(w, h, size, mode) for w, h in sizes]
        row = dict(size=size, mode=mode, n=n, threads=threads, reps=reps,
                   exact=rate["exact"], auto=rate["auto"], ratio=ratio,
                   exact_cpu=cpu_rate["exact"], auto_cpu=cpu_rate["auto"],
                   psnr_median=float(np.median(ps)), psnr_p10=float(np.percentile(ps, 10)),
                   psnr_min=float(np.min(ps)), factor_min=min(fac), factor_max=max(fac),
                   scales=scales)
        rows.append(row)
        log(line(row))
        for p in out.values():
            os.remove(p)
    return rows


HEADER = ("| output | downscale | exact img/s | auto img/s | auto/exact "
          "| img per CPU s, exact / auto (ratio) | PSNR auto vs exact: median, p10, min | DCT scales auto used |\n"
          "|---|---|---|---|---|---|---|---|")


def line(r):
    return (f"| {r['size']} {r['mode']} (-j{r['threads']}, {r['n']} photos) "
            f"| {r['factor_min']:.1f}-{r['factor_max']:.1f}x "
            f"| {rng_text(r['exact'])} | {rng_text(r['auto'])} "
            f"| {rng_text(r['ratio'], '{:.2f}')} "
            f"| {statistics.median(r['exact_cpu']):.0f} / {statistics.median(r['auto_cpu']):.0f} "
            f"({statistics.median(r['auto_cpu']) / statistics.median(r['exact_cpu']):.2f}x) "
            f"| {r['psnr_median']:.2f}, {r['psnr_p10']:.2f}, {r['psnr_min']:.2f} dB "
            f"| {r['scales']} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", default="/tmp/ld_bench_decode_scale")
    ap.add_argument("--n", type=int, default=320)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("-j", type=int, default=1)
    ap.add_argument("--configs", default="224:squash,256:crop,512:crop")
    a = ap.parse_args()
    dataconv = os.path.join(a.build, "dataconv")
    if not os.access(dataconv, os.X_OK):
        sys.exit(f"no dataconv in {a.build}")
    os.makedirs(a.work, exist_ok=True)
    folder = make(os.path.join(a.work, f"big{a.n}"), a.n)
    configs = [(int(c.split(":")[0]), c.split(":")[1]) for c in a.configs.split(",")]
    print(f"decode_scale: {a.n} photos in {folder}, load {os.getloadavg()[0]:.2f}", flush=True)
    print(HEADER, flush=True)
    measure(dataconv, folder, a.work, configs, a.reps, a.j, log=lambda s: print(s, flush=True))
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
