#!/usr/bin/python3
"""Conversion benchmark of bench/run: a folder of real-photo JPEGs (about 500x375) to 224x224
(squash, as convert_imageset), raw uint8 BGR CHW and JPEG q70, into HDF5 and LMDB.

Contenders, each on the same folder, page cache warm, one process per run:
  dataconv -j1, -jN (all cores) and -j2N (more workers than cores);
  the scripts users write (worker mode of this file), single process:
    Pillow + h5py, Pillow + python-lmdb, OpenCV (cv2) + h5py, OpenCV + python-lmdb:
    Image.open().convert("RGB").resize((224, 224)) (Pillow's default filter) or
    cv2.imread + cv2.resize (default INTER_LINEAR); raw pixels as BGR CHW; JPEG q70 through
    Image.save / cv2.imencode; HDF5: a (N,3,224,224) uint8 dataset with 1 MiB chunks or a
    vlen uint8 dataset of JPEG bytes; LMDB: Caffe Datum records (python3-protobuf), one
    transaction per 1000 records, as convert_imageset writes them;
  `vips thumbnail` and ImageMagick `convert` per file, output files only (PPM for raw, JPEG
    q70): no container at all, so a lower bound of what a pipeline around them costs. One
    process per file, from a pool of 1 or N at a time (MAGICK_THREAD_LIMIT=1 and
    VIPS_CONCURRENCY=1: the parallelism is the pool's).
The limit of `dataconv -j1` raw → HDF5 is libjpeg-turbo decoding the same files alone
(BUILD/bench/baselines --decode-all: the files in memory, one thread, default settings); each
repeat runs it right before `dataconv -j1`, and the row `limit` keeps both and their ratio, by
wall time and by CPU time (the CPU ratio holds up on a busy machine, the wall one does not;
dataconv's CPU time includes its start-up, about 15 ms: 0.1 ms per image in a 160-image run).
Between the two, BUILD/bench/convert_ceiling runs libdata's own decode + resize of the same
in-memory files on one thread with no I/O, no container and no hand-off: the pixels dataconv
makes, and so the ceiling of any conversion that makes them; the row keeps (i) decode alone,
(ii) decode + resize, (iii) dataconv -j1, and the ratios (iii)/(i), (ii)/(i), (iii)/(ii).
Throughput is images / seconds, where seconds is the wall time of the process for CLI tools and
the script's own time from listing the files to closing the output for the Python scripts
(interpreter start-up and imports, ~0.3 s, excluded). CPU seconds (user + system, all threads
and child processes, imports excluded) per image are recorded too: the cost per core.

    suite_convert.py worker pil|cv2 h5|lmdb QUALITY SRC OUT     (one script run, JSON out)
    suite_convert.py perfile vips|magick raw|q70 JOBS LIST OUTDIR   (per-file tool run)
"""
import io
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import suite_common as sc  # noqa: E402

S = 224


def list_images(src):
    """(path, relative path, label): classes sorted, files sorted (dataconv's order)."""
    classes = sorted(d for d in os.listdir(src)
                     if not d.startswith(".") and os.path.isdir(os.path.join(src, d)))
    items = []
    for label, c in enumerate(classes):
        for f in sorted(os.listdir(os.path.join(src, c))):
            if f.lower().endswith((".jpg", ".jpeg")) and not f.startswith("."):
                items.append((os.path.join(src, c, f), f"{c}/{f}", label))
    return items


def worker(decoder, store, quality, src, out):
    """What a user writes: one process, one image at a time."""
    import numpy as np
    t0, c0 = time.perf_counter(), time.process_time()
    items = list_images(src)
    if decoder == "pil":
        from PIL import Image

        def load(p):  # -> HWC BGR uint8 for raw, or JPEG bytes
            im = Image.open(p).convert("RGB").resize((S, S))
            if quality:
                b = io.BytesIO()
                im.save(b, format="JPEG", quality=quality)
                return b.getvalue()
            return np.asarray(im)[:, :, ::-1]
    else:
        import cv2

        def load(p):
            im = cv2.resize(cv2.imread(p, cv2.IMREAD_COLOR), (S, S))
            if quality:
                ok, buf = cv2.imencode(".jpg", im, [cv2.IMWRITE_JPEG_QUALITY, quality])
                return buf.tobytes()
            return im
    n = len(items)
    if store == "h5":
        import h5py
        with h5py.File(out, "w") as h5:
            h5.create_dataset("label", data=np.array([lb for _, _, lb in items], np.int32))
            if quality:
                d = h5.create_dataset("encoded", (n,), dtype=h5py.vlen_dtype(np.uint8))
                for i, (p, _, _) in enumerate(items):
                    d[i] = np.frombuffer(load(p), np.uint8)
            else:
                d = h5.create_dataset("data", (n, 3, S, S), np.uint8, chunks=(6, 3, S, S))
                for i, (p, _, _) in enumerate(items):
                    d[i] = load(p).transpose(2, 0, 1)
    else:
        import lmdb
        sys.path.insert(0, os.path.join(HERE, "..", "tests", "python"))
        from lmdb_caffe_pb import Datum
        env = lmdb.open(out, map_size=max(1 << 30, n * 3 * S * S * 2))
        txn = env.begin(write=True)
        for i, (p, rel, label) in enumerate(items):
            x = load(p)
            if quality:
                d = Datum(channels=3, height=S, width=S, data=x, label=label, encoded=True)
            else:
                d = Datum(channels=3, height=S, width=S, data=x.transpose(2, 0, 1).tobytes(),
                          label=label)
            txn.put(f"{i:08d}_{rel}".encode(), d.SerializeToString())
            if (i + 1) % 1000 == 0:
                txn.commit()
                txn = env.begin(write=True)
        txn.commit()
        env.close()
    print(json.dumps({"images": n, "seconds": time.perf_counter() - t0,
                      "cpu": time.process_time() - c0}))


def perfile(tool, kind, jobs, listfile, outdir):
    files = [ln for ln in open(listfile).read().splitlines() if ln]
    ext = ".ppm" if kind == "raw" else ".jpg"
    env = dict(os.environ, MAGICK_THREAD_LIMIT="1", VIPS_CONCURRENCY="1")
    convert = _which_convert()
    os.makedirs(outdir, exist_ok=True)

    def one(k):
        p = files[k]
        o = os.path.join(outdir, f"{k:06d}{ext}")
        if tool == "vips":
            o2 = o if kind == "raw" else o + "[Q=70]"
            cmd = ["vips", "thumbnail", p, o2, str(S), "--height", str(S), "--size", "force"]
        else:
            cmd = [convert, p, "-resize", f"{S}x{S}!"] + \
                  (["-quality", "70"] if kind != "raw" else []) + [o]
        subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
    t0 = time.perf_counter()
    c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    with ThreadPoolExecutor(jobs) as ex:
        list(ex.map(one, range(len(files))))
    c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(json.dumps({"images": len(files), "seconds": time.perf_counter() - t0,
                      "cpu": c1.ru_utime + c1.ru_stime - c0.ru_utime - c0.ru_stime}))


def _which_convert():
    # /usr/local/bin may hold a stand-in; ImageMagick 6 from Debian is /usr/bin/convert-im6.q16
    for c in ("/usr/bin/convert-im6.q16", "/usr/bin/convert"):
        if os.path.exists(c):
            return c
    return shutil.which("convert")


def quality(out_h5, items, count=300):
    """Mean and worst PSNR (dB) against Pillow's decode + LANCZOS resize to 224x224 of the first
    COUNT photos: dataconv's raw HDF5 output (OUT_H5), and, for scale, the resizes the users'
    scripts above make (Pillow's default filter, OpenCV's INTER_LINEAR) of the same photos."""
    import cv2
    import h5py
    import numpy as np
    from PIL import Image

    def psnr(a, b):
        mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
        return 99.0 if mse == 0 else 10 * np.log10(255.0 ** 2 / mse)
    scores = {"dataconv": [], "pil_default": [], "cv2_linear": []}
    with h5py.File(out_h5, "r") as f:
        data = f["data"]
        for i, (path, _, _) in enumerate(items[:count]):
            im = Image.open(path).convert("RGB")
            ref = np.asarray(im.resize((S, S), Image.LANCZOS))
            scores["dataconv"].append(psnr(data[i].transpose(1, 2, 0)[:, :, ::-1], ref))
            scores["pil_default"].append(psnr(np.asarray(im.resize((S, S))), ref))
            bgr = cv2.resize(cv2.imread(path), (S, S), interpolation=cv2.INTER_LINEAR)
            scores["cv2_linear"].append(psnr(bgr[:, :, ::-1], ref))
    return {k: {"mean": float(np.mean(v)), "worst": float(np.min(v)), "n": len(v)}
            for k, v in scores.items()}


def decode_limit(res, dataconv, photos, items, out_h5, reps):
    """dataconv -j1 raw → HDF5 as a ratio to libjpeg-turbo decoding the same files alone, the
    two run back to back in each repeat; one row in section "convlimit"."""
    exe = os.path.join(os.path.dirname(dataconv), "bench", "baselines")
    if not os.access(exe, os.X_OK):
        res.add("convlimit", "raw → HDF5", "libjpeg-turbo decode only",
                error=f"{exe} not built (-DLIBDATA_BUILD_BENCH=ON)")
        return
    n = len(items)
    ceiling = os.path.join(os.path.dirname(exe), "convert_ceiling")
    has_ceiling = os.access(ceiling, os.X_OK)

    def go():
        if os.path.exists(out_h5):
            os.unlink(out_h5)
        sc.warm(photos)
        d = sc.run_json([exe, "--decode-all", "1.0"] + [p for p, _, _ in items])
        # (ii): libdata's decode + resize of the same files, in memory, one thread
        cl = sc.run_json([ceiling, "1.0", str(S)] + [p for p, _, _ in items]) \
            if has_ceiling else None
        # CPU time from the children's rusage (microseconds; /usr/bin/time prints 10 ms steps,
        # 6 % of a 160-image run)
        r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
        subprocess.run([dataconv, photos, out_h5, "--resize", str(S), "-j", "1", "--quiet"],
                       check=True, stdout=subprocess.DEVNULL)
        dt, r1 = time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_CHILDREN)
        conv_cpu = 1e3 * (r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime) / n
        r = {"dec_ips": d["images_per_s"], "dec_cpu": d["cpu_ms_per_image"],
             "conv_ips": n / dt, "conv_cpu": conv_cpu,
             "ratio_wall": n / dt / d["images_per_s"],
             "ratio_cpu": d["cpu_ms_per_image"] / conv_cpu if conv_cpu > 0 else None}
        if cl:
            r.update({"ceil_ips": cl["decode_resize_ips"], "ceil_cpu": cl["decode_resize_cpu_ms"],
                      "ceil_dec_cpu": cl["part_decode_cpu_ms"],
                      "ceil_resize_cpu": cl["part_resize_cpu_ms"],
                      "ceil_ratio_wall": cl["decode_resize_ips"] / d["images_per_s"],
                      "ceil_ratio_cpu": d["cpu_ms_per_image"] / cl["decode_resize_cpu_ms"],
                      "conv_ceil_wall": n / dt / cl["decode_resize_ips"],
                      "conv_ceil_cpu": cl["decode_resize_cpu_ms"] / conv_cpu
                      if conv_cpu > 0 else None})
        return r
    got, err = sc.repeat(reps, go)
    keys = ["dec_ips", "dec_cpu", "conv_ips", "conv_cpu", "ratio_wall", "ratio_cpu"]
    if has_ceiling:
        keys += ["ceil_ips", "ceil_cpu", "ceil_dec_cpu", "ceil_resize_cpu", "ceil_ratio_wall",
                 "ceil_ratio_cpu", "conv_ceil_wall", "conv_ceil_cpu"]
    q = quality(out_h5, items) if got else None
    row = res.add("convlimit", "raw → HDF5", "libjpeg-turbo decode only", images=n,
                  **{k: sc.summarize([g[k] for g in got]) for k in keys}, psnr=q,
                  error=None if got else err)
    if q:
        sc.log(f"  quality vs Pillow LANCZOS, {q['dataconv']['n']} photos: dataconv "
               f"{q['dataconv']['mean']:.2f} dB (worst {q['dataconv']['worst']:.2f}); Pillow "
               f"default {q['pil_default']['mean']:.2f}; OpenCV INTER_LINEAR "
               f"{q['cv2_linear']['mean']:.2f}")
    if got:
        sc.log(f"  decode-only limit: libjpeg-turbo {row['dec_ips']['median']:,.0f} img/s "
               f"({row['dec_cpu']['median']:.2f} CPU ms/img); dataconv -j1 "
               f"{row['conv_ips']['median']:,.0f} img/s ({row['conv_cpu']['median']:.2f} CPU "
               f"ms/img): ratio {row['ratio_wall']['median']:.2f} by wall time, "
               f"{row['ratio_cpu']['median']:.2f} by CPU time")
    if got and row.get("ceil_ips"):
        sc.log(f"  ceiling: libdata decode + resize, in memory, 1 thread "
               f"{row['ceil_ips']['median']:,.0f} img/s ({row['ceil_cpu']['median']:.2f} CPU "
               f"ms/img, resize {row['ceil_resize_cpu']['median']:.2f}): "
               f"{row['ceil_ratio_wall']['median']:.2f} of decode alone by wall time, "
               f"{row['ceil_ratio_cpu']['median']:.2f} by CPU; dataconv -j1 = "
               f"{row['conv_ceil_wall']['median']:.2f} of it by wall time, "
               f"{row['conv_ceil_cpu']['median']:.2f} by CPU")


def measure(res, dataconv, photos, work, reps, n_perfile):
    """Run every conversion contender REPS times on PHOTOS; adds rows to RES."""
    cores = os.cpu_count()
    items = list_images(photos)
    n = len(items)
    out_h5, out_lmdb = os.path.join(work, "conv.h5"), os.path.join(work, "conv.lmdb")
    me = os.path.abspath(__file__)
    decode_limit(res, dataconv, photos, items, out_h5, reps)

    def clean():
        if os.path.exists(out_h5):
            os.unlink(out_h5)
        shutil.rmtree(out_lmdb, ignore_errors=True)
        shutil.rmtree(os.path.join(work, "perfile"), ignore_errors=True)

    def one(group, name, cmd, count, internal, tool, jobs):
        def go():
            clean()
            sc.warm(photos)
            r = sc.run_json(cmd) if internal else None
            if r is None:
                o, dt, rss = sc.run(cmd)
                r = {"seconds": dt, "rss_mb": rss, "cpu_s": sc.run.last_cpu}
            r["ips"] = count / r["seconds"]
            # the worker's own CPU time when it reports one (imports excluded)
            r["cpu_ms_per_image"] = 1e3 * r.get("cpu", r["cpu_s"]) / count
            return r
        got, err = sc.repeat(reps, go)
        row = res.add("convert", group, name, tool=tool, jobs=jobs, images=count,
                      ips=sc.summarize([g["ips"] for g in got]),
                      rss_mb=sc.summarize([g["rss_mb"] for g in got]),
                      cpu_ms=sc.summarize([g["cpu_ms_per_image"] for g in got]),
                      error=None if got else err)
        sc.log(f"  {group:18} {name:26} {sc.fmt_rate(row['ips'], ' img/s'):>28}  "
               f"RSS {row['rss_mb']['median'] if got else 0:7.1f} MiB  "
               f"CPU {row['cpu_ms']['median'] if got else 0:5.2f} ms/img")

    for q in (0, 70):
        kind = "raw" if not q else f"JPEG q{q}"
        qargs = ["--quality", str(q)] if q else []
        for store, out in (("h5", out_h5), ("lmdb", out_lmdb)):
            group = f"{kind} → {'HDF5' if store == 'h5' else 'LMDB'}"
            for j in (1, cores, 2 * cores):  # and -j beyond the cores: not slower (issue 30)
                one(group, f"dataconv -j{j}", [dataconv, photos, out, "--resize", str(S), "-j",
                                               str(j), "--quiet"] + qargs, n, False,
                    "dataconv", j)
            lib = "h5py" if store == "h5" else "python-lmdb"
            for dec, dname in (("pil", "Pillow"), ("cv2", "OpenCV")):
                one(group, f"{dname} + {lib}",
                    [sc.PY, me, "worker", dec, store, str(q), photos, out], n, True, dname, 1)
    # per-file CLI tools on the first n_perfile images
    listfile = os.path.join(work, "perfile.txt")
    with open(listfile, "w") as f:
        f.write("\n".join(p for p, _, _ in items[:n_perfile]) + "\n")
    conv = _which_convert()
    for q in (0, 70):
        kind = "raw" if not q else f"JPEG q{q}"
        group = f"{kind} → files"
        for tool, tname, ok in (("vips", "vips thumbnail", shutil.which("vips")),
                                ("magick", "ImageMagick convert", conv)):
            if not ok:
                res.add("convert", group, tname, error=f"{tool} not installed")
                continue
            for j in (1, cores):
                od = os.path.join(work, "perfile")
                one(group, f"{tname} per file, {j} at a time",
                    [sc.PY, me, "perfile", tool, "raw" if not q else "q70", str(j), listfile, od],
                    min(n, n_perfile), True, tool, j)
    clean()


def memory(res, dataconv, folders, work):
    """Peak RSS of converting folders of growing size (raw 224x224; one run each):
    FOLDERS = [(n, path)]. dataconv -jN to HDF5 and LMDB, the Pillow scripts."""
    cores = os.cpu_count()
    me = os.path.abspath(__file__)
    out_h5, out_lmdb = os.path.join(work, "mem.h5"), os.path.join(work, "mem.lmdb")
    for n, src in folders:
        runs = [("dataconv → HDF5", [dataconv, src, out_h5, "--resize", str(S), "-j", str(cores),
                                     "--quiet"]),
                ("dataconv → LMDB", [dataconv, src, out_lmdb, "--resize", str(S), "-j",
                                     str(cores), "--quiet"]),
                ("Pillow + h5py", [sc.PY, me, "worker", "pil", "h5", "0", src, out_h5]),
                ("Pillow + python-lmdb", [sc.PY, me, "worker", "pil", "lmdb", "0", src,
                                          out_lmdb])]
        for name, cmd in runs:
            if os.path.exists(out_h5):
                os.unlink(out_h5)
            shutil.rmtree(out_lmdb, ignore_errors=True)
            sc.warm(src)

            def go(cmd=cmd):
                o, dt, rss = sc.run(cmd)
                return dt, rss, sc.run.last_anon
            got, err = sc.repeat(1, go)
            res.add("memconv", name, f"{n}", images=n,
                    rss_mb=sc.summarize([g[1] for g in got]),
                    anon_mb=sc.summarize([g[2] for g in got]),
                    ips=sc.summarize([n / g[0] for g in got]), error=None if got else err)
            sc.log(f"  convert {n:6d} images {name:24} peak RSS "
                   f"{got[0][1] if got else float('nan'):8.1f} MiB, private "
                   f"{got[0][2] if got else float('nan'):8.1f} MiB")
    if os.path.exists(out_h5):
        os.unlink(out_h5)
    shutil.rmtree(out_lmdb, ignore_errors=True)


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "worker":
        _, _, dec, store, q, src, out = sys.argv
        worker(dec, store, int(q), src, out)
    elif len(sys.argv) >= 2 and sys.argv[1] == "perfile":
        _, _, tool, kind, jobs, lst, od = sys.argv
        perfile(tool, kind, int(jobs), lst, od)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
