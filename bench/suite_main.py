#!/usr/bin/python3
"""bench/run's driver: conversion, reading, limits and memory, in one run, then the report.

    suite_main.py [--quick] [--build DIR] [--work DIR] [--out DIR] [--reps R]
                  [--only convert,read,memory]

--build   a CMake build directory with dataconv and libdata.so (bench/run makes build-bench)
--work    scratch folder for photos, datasets and outputs (default /tmp/ld_bench_suite;
          photos and datasets are reused by later runs)
--out     where benchmarks.md and the charts go (default: docs/ for a full run, WORK/report for
          --quick, so that everyday checks do not rewrite the committed page)
"""
import argparse
import datetime
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import suite_common as sc  # noqa: E402
import suite_convert  # noqa: E402
import suite_photos  # noqa: E402
import suite_read  # noqa: E402
import suite_report  # noqa: E402
import rrc_bench  # noqa: E402
import decode_scale  # noqa: E402
import masks_bench  # noqa: E402

# sizes: full run for a 2-core, 24 GiB machine (~25 min); quick for everyday checks
SIZES = {
    "full": dict(photos=2000, convert=600, perfile=100, read=9000, read_enc=2000,
                 read_mem=[1000, 3000, 9000], conv_mem=[500, 1500, 5000], seconds=1.5, reps=3,
                 cold=16000, cold_pairs=7, big=320),
    "quick": dict(photos=240, convert=160, perfile=16, read=1024, read_enc=512,
                  read_mem=[256, 1024], conv_mem=[120, 480], seconds=0.5, reps=3,
                  cold=1024, cold_pairs=2, big=64),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--build", default=os.path.join(ROOT, "build-bench"))
    ap.add_argument("--work", default="/tmp/ld_bench_suite")
    ap.add_argument("--out")
    ap.add_argument("--reps", type=int)
    ap.add_argument("--only", default="convert,read,memory,rrc,decode_scale,masks",
                    help="sections: convert, read, memory, rrc, decode_scale (large photos, "
                    "--decode-scale auto vs exact), masks (images with segmentation masks vs "
                    "images alone); cold (the cold-cache reading row alone, part of read)")
    a = ap.parse_args()
    cfg = dict(SIZES["quick" if a.quick else "full"])
    reps = a.reps or cfg["reps"]
    only = set(a.only.split(","))
    work = os.path.abspath(a.work)
    os.makedirs(work, exist_ok=True)
    out = os.path.abspath(a.out or (os.path.join(work, "report") if a.quick
                                    else os.path.join(ROOT, "docs")))
    dataconv = os.path.join(a.build, "dataconv")
    if not os.access(dataconv, os.X_OK) or not os.path.exists(os.path.join(a.build, "libdata.so")):
        sys.exit(f"no dataconv / libdata.so in {a.build}: build them (bench/run does)")
    t_start = time.time()
    ver = subprocess.run([dataconv, "--version"], capture_output=True, text=True).stdout
    btype = ""
    try:
        btype = [ln.split("=", 1)[1] for ln in open(os.path.join(a.build, "CMakeCache.txt"))
                 if ln.startswith("CMAKE_BUILD_TYPE:")][0].strip()
    except (OSError, IndexError):
        pass
    meta = {"date": datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC"),
            "quick": a.quick, "reps": reps, "sizes": cfg, "machine": sc.machine(),
            "load_before": round(os.getloadavg()[0], 2),
            "libdata_version": ver.strip().splitlines()[0] if ver.strip() else "?",
            "build_type": btype,
            "not_measured": [
                "vips and ImageMagick pipelines that also pack their output into HDF5/LMDB: "
                "only their per-file resize + encode is timed (a lower bound of such a pipeline)",
                "libdata Python and the DataLoader peers on LMDB, and DataLoader in sequential "
                "order or on sequential JPEG batches: the same code paths as the rows shown",
                "GPU input pipelines (DALI, torchvision.io.decode_jpeg on GPU): no GPU here",
                "cold-cache (disk-bound) reading other than libdata's block shuffle against "
                "dd: the peers and the other orders read from a warm page cache"]}
    cores = os.cpu_count()
    res = sc.Results(os.path.join(work, "results.json"), meta)
    sc.log(f"bench: {'quick' if a.quick else 'full'} run, {cores} cores, load "
           f"{meta['load_before']}, work {work}, report -> {out}")

    sc.log("photos ...")
    photos = suite_photos.make(os.path.join(work, f"photos{cfg['photos']}"), cfg["photos"])
    meta["photos"] = cfg["photos"]
    meta["photo_sources"] = len(open(os.path.join(photos, "sources.txt")).read().split())

    meta["section_minutes"] = {}
    t_sec = [time.time()]

    def lap(name):
        now = time.time()
        meta["section_minutes"][name] = round((now - t_sec[0]) / 60, 2)
        meta.setdefault("load_trace", []).append(
            f"{datetime.datetime.utcnow():%H:%M} {os.getloadavg()[0]:.1f}")
        sc.log(f"  ({name}: {(now - t_sec[0]) / 60:.1f} min)")
        t_sec[0] = now

    def folder(n):
        if n == cfg["photos"]:
            return photos
        return suite_photos.replicate(photos, min(n, cfg["photos"]),
                                      os.path.join(work, f"photos{cfg['photos']}x{n}"), n)

    lap("photos")
    if "convert" in only:
        sc.log(f"conversion: {cfg['convert']} photos, {reps} repeats ...")
        suite_convert.measure(res, dataconv, folder(cfg["convert"]), work, reps, cfg["perfile"])
        lap("conversion")

    if only & {"read", "memory", "cold"}:
        sc.log("reading datasets ...")
        fm = [("raw", f, n) for n in sorted(set(cfg["read_mem"] + [cfg["read"]]))
              for f in ("h5", "lmdb")] if only & {"read", "memory"} else []
        fm += [("q70", f, cfg["read_enc"]) for f in ("h5", "lmdb")] if fm else []
        if only & {"read", "cold"}:  # the cold-cache file: >= 2 GB, one run takes seconds
            fm.append(("raw", "h5", cfg["cold"]))
        ds = suite_read.make_datasets(dataconv, photos, work, fm)
        rd = suite_read.Reading(res, a.build, dataconv, work, reps, cfg["seconds"], 256)
        lap("datasets")
        if not rd.baselines:
            meta["not_measured"].append("BUILD/bench/baselines was not built "
                                        "(-DLIBDATA_BUILD_BENCH=ON): no libjpeg-turbo decode "
                                        "limit")
    if "read" in only:
        sc.log("the reading datasets into the page cache, in file order ...")
        sc.refill(*(ds[(kind, f, cfg["read" if kind == "raw" else "read_enc"])]
                    for kind in ("raw", "q70") for f in ("h5", "lmdb")))
        sc.log("limits ...")
        jp = suite_read.extract_jpegs(ds[("q70", "h5", cfg["read_enc"])],
                                      os.path.join(work, "jpegs_q70"))
        rd.limits(jp, ds[("raw", "h5", cfg["read"])])
        sc.log(f"reading: {cfg['read']} raw samples, {cfg['read_enc']} JPEG, {reps} repeats ...")
        rd.throughput(ds, cfg["read"], cfg["read_enc"])
    if only & {"read", "cold"}:
        sc.log(f"reading with a cold cache: {cfg['cold']} raw samples, {cfg['cold_pairs']} "
               "pairs with dd ...")
        rd.cold(ds[("raw", "h5", cfg["cold"])], cfg["cold"], cfg["cold_pairs"])
        lap("reading")
    if "memory" in only:
        sc.log("memory against dataset size: conversion ...")
        suite_convert.memory(res, dataconv, [(n, folder(n)) for n in cfg["conv_mem"]], work)
        lap("memory, conversion")
        sc.log("memory against dataset size: reading ...")
        rd.memory(ds, cfg["read_mem"])
        lap("memory, reading")

    if "rrc" in only:
        sc.log(f"random resized crop: libdata vs torchvision, {cores} threads/workers ...")
        rr = rrc_bench.measure(a.build, photos, work, cores, cfg["seconds"], reps)
        for name, v in rr.items():
            res.add("rrc", "RandomResizedCrop(224) + flip", name, threads=cores,
                    sps_core=sc.summarize(v["cpu"]), sps_wall=sc.summarize(v["wall"]))
        bd = rrc_bench.bound(a.build, photos, cfg["seconds"])
        if bd:
            res.add("rrc_bound", "RandomResizedCrop(224): decode alone", "bound", **bd)
        bdr = rrc_bench.bound(a.build, photos, cfg["seconds"], rrc_bench.recipe_files(work))
        if bdr:
            res.add("rrc_bound", "RandomResizedCrop(224): decode alone", "bound, recipe", **bdr)
        sc.log(rrc_bench.report(rr, cores, bd, bdr))
        lap("random resized crop")

    if "decode_scale" in only:
        sc.log(f"large photos: --decode-scale auto vs exact, {cfg['big']} photos, -j1, "
               f"{reps} pairs ...")
        big = decode_scale.make(os.path.join(work, f"big{cfg['big']}"), cfg["big"])
        for r in decode_scale.measure(dataconv, big, work, [(224, "squash"), (256, "crop")],
                                      reps, 1, log=sc.log):
            res.add("decode_scale", "large photos", f"{r['size']} {r['mode']}", **r)
        lap("large photos")

    if "masks" in only:
        sc.log(f"segmentation masks: image + mask vs image alone, {cfg['photos']} photos, "
               f"{reps} pairs ...")
        for r in masks_bench.measure(dataconv, photos, os.path.join(work, "masks"), reps,
                                     log=sc.log):
            res.add("masks", "segmentation masks", f"{r['kind']} -j{r['threads']}", **r)
        lap("masks")

    meta["load_after"] = round(os.getloadavg()[0], 2)
    meta["minutes"] = (time.time() - t_start) / 60
    if max(meta["load_before"], meta["load_after"]) > cores:
        meta["load_note"] = ("the machine was busy with other work: treat the numbers as "
                             "noisy")
    res.save()
    md, made = suite_report.write(res.path, out)
    print(md)
    sc.log(f"bench: done in {meta['minutes']:.1f} min; {os.path.join(out, 'benchmarks.md')}, "
           + ", ".join(os.path.basename(p) for p in made))


if __name__ == "__main__":
    main()
