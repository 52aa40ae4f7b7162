#!/usr/bin/python3
"""RandomResizedCrop(224) + RandomHorizontalFlip, three ways, over the same photos (issue 16
item 3), per core (all with T threads / worker processes): samples per CPU second of the whole
pipeline (threads and worker processes; robust on a busy machine), and wall samples/s / T:

  (a) libdata, random_resized_crop: JPEG box decoder (only the box, reduced DCT scale), with
      the default filter (rrc_filter="bilinear", torchvision's)
  (b) libdata, the same transform and filter by full decode + crop + resize (rrc_full_decode):
      (a)/(b) isolates the box decoder
  (c) torchvision: ImageFolder + RandomResizedCrop(224) + RandomHorizontalFlip + PILToTensor
      through a DataLoader with T worker processes (uint8 tensors, as libdata's uint8 output)

libdata reads the photos' own bytes (dataconv --encoded, the same files torchvision opens);
(a') and (b') read the documented recipe (dataconv --max-side 256 --quality 90
--restart-markers), whose JPEGs carry restart markers, so that the box decoder Huffman-decodes
only the box's restart segments (libdata/src/codec/jpeg_splice.c); (c') is torchvision on the
same recipe written without restart markers as JPEG files (the photos as a user of the recipe
would hand them to torchvision, in its best case); (a-L) and (b-L) are (a) and (b) with
rrc_filter="lanczos3" (the conversion's filter).

The bound of (a)/(b) (BUILD/bench/rrc_rate, built with -DLIBDATA_BUILD_BENCH=ON): for the
reader's boxes, one thread, files in memory, the CPU time of box decode alone against full
decode alone (the most a box decoder can gain), and of the two whole transforms (decode +
the resampling both share): their ratio is the most (a)/(b) can be, the reader adding the same
batch work to both. The same on the recipe's JPEGs (taken out of its HDF5 file) bounds
(a')/(b').

    rrc_bench.py [--build DIR] [--photos DIR | --make N] [--work DIR] [--threads T]
                 [--seconds S] [--json OUT]
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# The recipe's dataset and its JPEGs as files; the names say the flags, so that a work folder
# kept from a run before --restart-markers is not taken for them.
RECIPE, RECIPE_JPEGS = "rrc_recipe_256_q90_rst.h5", "recipe_rst_jpegs"
# The same recipe without restart markers, as an ImageFolder of JPEG files: torchvision's (c')
# reads the photos as the recipe stores them, in its best case (markers would slow its decode).
PLAIN, PLAIN_FOLDER = "rrc_recipe_256_q90.h5", "recipe_plain_folder"


def proc_cpu(pids):
    """CPU seconds (user + system) used so far by the processes `pids` (/proc/PID/stat)."""
    tick, total = os.sysconf("SC_CLK_TCK"), 0.0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / tick
    return total


class Meter:
    """Samples per wall second and per CPU second (all threads, worker processes included):
    on a busy machine the CPU figure still says what one core delivers."""

    def __init__(self, seconds, pids=()):
        self.seconds, self.pids, self.n, self.t0 = seconds, list(pids), 0, None

    def cpu(self):
        return time.process_time() + proc_cpu(self.pids)

    def add(self, n):
        """False once `seconds` have passed. The first batch pays for the start: not timed."""
        if self.t0 is None:
            self.t0, self.c0 = time.perf_counter(), self.cpu()
            return True
        self.n += n
        return time.perf_counter() - self.t0 < self.seconds

    def rates(self):
        wall, cpu = time.perf_counter() - self.t0, self.cpu() - self.c0
        return self.n / wall, self.n / cpu


def libdata_rate(path, threads, seconds, **kw):
    import libdata
    m = Meter(seconds)
    with libdata.Reader(path, batch_size=64, shuffle=True, threads=threads, mirror=True,
                        random_resized_crop=224, copy=False, **kw) as r:
        while True:
            for data, _labels in r:
                if not m.add(len(data)):
                    return m.rates()


def torchvision_rate(folder, threads, seconds):
    import torch
    from torchvision import datasets, transforms
    tf = transforms.Compose([transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(),
                             transforms.PILToTensor()])
    ds = datasets.ImageFolder(folder, transform=tf)
    dl = torch.utils.data.DataLoader(ds, batch_size=64, shuffle=True, num_workers=threads,
                                     persistent_workers=threads > 0)
    m = None
    while True:
        it = iter(dl)
        if m is None:
            m = Meter(seconds, [w.pid for w in getattr(it, "_workers", [])])
        for data, _labels in it:
            if not m.add(len(data)):
                return m.rates()


def measure(build, photos, work, threads, seconds, reps=3):
    """{name: [samples/s per core, ...]} of `reps` runs each."""
    dataconv = os.path.join(build, "dataconv")
    os.makedirs(work, exist_ok=True)
    orig, recipe = os.path.join(work, "rrc_original.h5"), os.path.join(work, RECIPE)
    plain = os.path.join(work, PLAIN)
    for out, flags in ((orig, ["--encoded"]),
                       (recipe, ["--max-side", "256", "--quality", "90", "--restart-markers"]),
                       (plain, ["--max-side", "256", "--quality", "90"])):
        if not os.path.exists(out):
            subprocess.run([dataconv, photos, out, "--rgb", *flags], check=True,
                           capture_output=True)
    os.environ.setdefault("LIBDATA_LIBRARY", os.path.join(build, "libdata.so"))
    sys.path.insert(0, os.path.join(ROOT, "bindings", "python"))
    runs = {
        "(a) libdata RRC, box decoder": lambda: libdata_rate(orig, threads, seconds),
        "(b) libdata RRC, full decode + crop + resize":
            lambda: libdata_rate(orig, threads, seconds, rrc_full_decode=True),
        "(c) torchvision ImageFolder + DataLoader":
            lambda: torchvision_rate(photos, threads, seconds),
        "(a') libdata RRC, box decoder, recipe dataset (--restart-markers)":
            lambda: libdata_rate(recipe, threads, seconds),
        "(b') libdata RRC, full decode + crop + resize, recipe dataset (--restart-markers)":
            lambda: libdata_rate(recipe, threads, seconds, rrc_full_decode=True),
        "(c') torchvision ImageFolder + DataLoader, the recipe's JPEGs as files (no markers)":
            lambda: torchvision_rate(plain_folder(work), threads, seconds),
        "(a-L) libdata RRC, box decoder, rrc_filter=lanczos3":
            lambda: libdata_rate(orig, threads, seconds, rrc_filter="lanczos3"),
        "(b-L) libdata RRC, full decode + crop + resize, rrc_filter=lanczos3":
            lambda: libdata_rate(orig, threads, seconds, rrc_full_decode=True,
                                 rrc_filter="lanczos3"),
    }
    res = {k: {"wall": [], "cpu": []} for k in runs}
    for _ in range(reps):  # interleaved, so drifting machine load hits every row alike
        for k, fn in runs.items():
            wall, cpu = fn()
            res[k]["wall"].append(wall / threads)
            res[k]["cpu"].append(cpu)
    return res


def plain_folder(work):
    """The recipe without restart markers (WORK/PLAIN, made by measure()) as an ImageFolder of
    JPEG files, WORK/PLAIN_FOLDER/c0/*.jpg, for torchvision's (c'). Returns the folder."""
    import h5py
    out = os.path.join(work, PLAIN_FOLDER)
    stamp = os.path.join(out, ".complete")
    if not os.path.exists(stamp):
        os.makedirs(os.path.join(out, "c0"), exist_ok=True)
        with h5py.File(os.path.join(work, PLAIN), "r") as f:
            e, o = f["encoded"][:], f["offsets"][:]
        for i in range(len(o) - 1):
            with open(os.path.join(out, "c0", f"{i:06d}.jpg"), "wb") as g:
                g.write(e[o[i]:o[i + 1]].tobytes())
        open(stamp, "w").close()
    return out


def recipe_files(work):
    """The recipe dataset's JPEGs (WORK/RECIPE, made by measure()) as files in
    WORK/RECIPE_JPEGS/, for rrc_rate. Returns their paths."""
    import h5py
    out = os.path.join(work, RECIPE_JPEGS)
    stamp = os.path.join(out, ".complete")
    if not os.path.exists(stamp):
        os.makedirs(out, exist_ok=True)
        with h5py.File(os.path.join(work, RECIPE), "r") as f:
            e, o = f["encoded"][:], f["offsets"][:]
        for i in range(len(o) - 1):
            with open(os.path.join(out, f"{i:06d}.jpg"), "wb") as g:
                g.write(e[o[i]:o[i + 1]].tobytes())
        open(stamp, "w").close()
    return sorted(os.path.join(out, f) for f in os.listdir(out) if f.endswith(".jpg"))


def bound(build, photos, seconds, files=None):
    """BUILD/bench/rrc_rate on the photos (or on `files`): {full_us, box_us, rrc_full_us,
    rrc_box_us, decode_ratio, bound}, or None (with a note on stderr) when it is not built."""
    prog = os.path.join(build, "bench", "rrc_rate")
    if not os.path.exists(prog):
        print(f"rrc_bench: no {prog}, so no bound of (a)/(b): build it with cmake -S . -B "
              f"{build} -DLIBDATA_BUILD_BENCH=ON && cmake --build {build} --target rrc_rate",
              file=sys.stderr)
        return None
    if files is None:
        files = sorted(os.path.join(d, f) for d, _, fs in os.walk(photos) for f in fs
                       if f.lower().endswith((".jpg", ".jpeg")))
    out = subprocess.run([prog, "--seconds", str(seconds), *files], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def bound_line(bd, what="the photos", pair="(a)/(b)"):
    """The bound in words (report and bench/run)."""
    return (f"  bound on {what} (bench/rrc_rate, 1 thread, same boxes, files in memory): box "
            f"decode alone is {bd['decode_ratio']:.2f}x full decode ({bd['box_us']:.0f} vs "
            f"{bd['full_us']:.0f} us/image); with the resampling both share "
            f"({bd['rrc_box_us'] - bd['box_us']:.0f} and {bd['rrc_full_us'] - bd['full_us']:.0f}"
            f" us), {pair} can at most be {bd['bound']:.2f}")


def median(v):
    v = sorted(v)
    return v[len(v) // 2]


def report(res, threads, bd=None, bd_recipe=None):
    lines = [f"RandomResizedCrop(224) + flip, {threads} threads / workers: samples per CPU "
             "second (all threads and worker processes), and wall samples/s / threads; "
             "median (range)"]
    for k, v in res.items():
        lines.append(f"  {k:70s} {median(v['cpu']):6.0f} ({min(v['cpu']):.0f}-"
                     f"{max(v['cpu']):.0f})   wall {median(v['wall']):6.0f} "
                     f"({min(v['wall']):.0f}-{max(v['wall']):.0f})")
    for how in ("cpu", "wall"):
        a, b, c = (median(res[k][how]) for k in list(res)[:3])
        lines.append(f"  {how}: (a)/(b) = {a / b:.2f} (goal >= 1.5), (a)/(c) = {a / c:.2f} "
                     "(goal >= 4)")
    names = list(res)
    c = median(res[names[2]]["cpu"])
    key = {k.split(" ")[0]: k for k in names}
    if "(a')" in key and "(b')" in key:
        a1, b1 = (median(res[key[k]]["cpu"]) for k in ("(a')", "(b')"))
        c1 = median(res[key["(c')"]]["cpu"]) if "(c')" in key else None
        lines.append(f"  cpu, recipe (restart markers): (a')/(b') = {a1 / b1:.2f} (goal >= 1.5)"
                     + (f", (a')/(c') = {a1 / c1:.2f} (goal >= 4; (c'): the same photos as "
                        "torchvision reads them)" if c1 else ""))
    if "(a-L)" in key and "(b-L)" in key:
        aL, bL = (median(res[key[k]]["cpu"]) for k in ("(a-L)", "(b-L)"))
        lines.append(f"  cpu, rrc_filter=lanczos3: (a-L)/(b-L) = {aL / bL:.2f}, (a-L)/(c) = "
                     f"{aL / c:.2f}")
    if bd:
        lines.append(bound_line(bd))
    if bd_recipe:
        lines.append(bound_line(bd_recipe, "the recipe's JPEGs (restart markers)", "(a')/(b')"))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build-bench"))
    ap.add_argument("--photos")
    ap.add_argument("--make", type=int, default=400, help="photos to make (suite_photos.py)")
    ap.add_argument("--work", default="/tmp/ld_bench_rrc")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--json")
    a = ap.parse_args()
    photos = a.photos
    if not photos:
        import suite_photos
        photos = suite_photos.make(os.path.join(a.work, f"photos{a.make}"), a.make)
    res = measure(a.build, photos, a.work, a.threads, a.seconds, a.reps)
    bd = bound(a.build, photos, a.seconds)
    bdr = bound(a.build, photos, a.seconds, recipe_files(a.work))
    print(report(res, a.threads, bd, bdr))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"threads": a.threads, "samples_per_core": res, "bound": bd,
                       "bound_recipe": bdr}, f, indent=1)


if __name__ == "__main__":
    main()
