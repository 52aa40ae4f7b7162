"""Shared pieces of the benchmark suite (bench/run): running one measurement in a child process
with its peak memory, repeats with medians and ranges, page-cache warming, the machine's
description, and the results file that the report is made from.

Every measurement runs as a separate process under /usr/bin/time, so every tool, ours and the
peers', is measured the same way and its peak RSS comes for free. Peak RSS is the larger of
  - GNU time's %M: the maximum RSS of the process (and of any child it waited for). time is a
    small process that forks its child: Linux carries a process's RSS high-water mark across
    exec, so a child forked from this Python process would inherit our RSS as its "peak";
  - the largest sum of VmRSS over the whole process tree, sampled every 20 ms: DataLoader
    workers are processes, and their memory adds up (pages shared between them, such as
    libraries, count once per process, as in `ps`).
"""
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time

PY = "/usr/bin/python3"
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def _children(pid):
    out = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                out += [int(c) for c in f.read().split()]
    except OSError:
        pass
    return out


def _rss_kb(pid):
    """(VmRSS, RssAnon) of PID in KiB."""
    rss = anon = 0
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1])
                elif line.startswith("RssAnon:"):
                    anon = int(line.split()[1])
    except OSError:
        pass
    return rss, anon


def tree_rss_kb(root):
    """Sums of VmRSS and of RssAnon over ROOT's descendants (ROOT is /usr/bin/time: left
    out, it is ours)."""
    total = anon = 0
    todo = _children(root)
    while todo:
        p = todo.pop()
        r, a = _rss_kb(p)
        total += r
        anon += a
        todo += _children(p)
    return total, anon


class Failed(Exception):
    pass


def run(cmd, env=None, timeout=900, cwd=None):
    """Run CMD (a list). Returns (stdout, wall seconds, peak RSS MiB); run.last_cpu is the
    child's user + system CPU seconds, run.last_anon the peak of the tree's summed RssAnon
    (private memory: no mapped file pages) in MiB. Raises Failed."""
    full = ["/usr/bin/time", "-f", "@@TIME %M %U %S"] + [str(c) for c in cmd]
    e = dict(os.environ)
    if env:
        e.update(env)
    peak = [0, 0]
    t0 = time.perf_counter()
    p = subprocess.Popen(full, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=e, cwd=cwd)
    stop = threading.Event()

    def poll():
        while not stop.wait(0.02):
            r, a = tree_rss_kb(p.pid)
            peak[0], peak[1] = max(peak[0], r), max(peak[1], a)
    th = threading.Thread(target=poll, daemon=True)
    th.start()
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        raise Failed(f"timed out after {timeout} s: {' '.join(map(str, cmd))}")
    finally:
        stop.set()
        th.join()
    dt = time.perf_counter() - t0
    lines = err.splitlines()
    tl = [ln for ln in lines if ln.startswith("@@TIME ")]
    if p.returncode != 0 or not tl:
        tail = "\n".join(ln for ln in lines if not ln.startswith("@@TIME "))[-2000:]
        raise Failed(f"exit {p.returncode}: {' '.join(map(str, cmd))}\n{tail}")
    f = tl[-1].split()
    rss = max(int(f[1]), peak[0]) / 1024
    run.last_cpu = float(f[2]) + float(f[3])  # user + system seconds of the child(ren)
    run.last_anon = peak[1] / 1024  # sampled: 0 for runs shorter than the 20 ms period
    return out, dt, rss


def run_json(cmd, **kw):
    """Run a worker that prints one JSON object as its last stdout line; adds wall and rss."""
    out, dt, rss = run(cmd, **kw)
    try:
        res = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise Failed(f"no JSON from {' '.join(map(str, cmd))}: {out[-500:]!r}")
    res.setdefault("wall", dt)
    res["rss_mb"] = rss
    res["cpu_s"] = run.last_cpu
    res["anon_mb"] = run.last_anon
    return res


def _files(paths):
    for path in paths:
        if os.path.isdir(path):
            for dp, _, fs in os.walk(path):
                for f in fs:
                    yield os.path.join(dp, f)
        elif os.path.exists(path):
            yield path


def warm(*paths):
    """Read files (or every file under folders) so that they are in the page cache: the
    kernel evicts idle pages after about a minute, which would favour whoever ran first."""
    for p in _files(paths):
        _warm_file(p)


def refill(*paths):
    """Drop files (or every file under folders) from the page cache and read them back in
    file order, so that runs start from the same cache state whatever ran before: how a file
    came into the cache changes how fast it is copied out. A sequential read brings large
    folios where the file system has them; POSIX_FADV_WILLNEED and random reads (a reader's
    own cold epoch) bring 4 KiB pages, which made the warm rows ~20 % slower in one run
    (bench/warm_after_cold.sh, bench/page_folios)."""
    for p in _files(paths):
        drop(p)
        _warm_file(p)


def drop(path):
    """Drop one file's pages from the page cache (POSIX_FADV_DONTNEED), written back first:
    DONTNEED leaves dirty pages (a file just made) cached. Other files' pages stay."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def _warm_file(p):
    with open(p, "rb", buffering=0) as f:
        while f.read(1 << 24):
            pass


def summarize(values):
    """Median, min, max of a list of numbers (None when empty)."""
    v = [x for x in values if x is not None]
    if not v:
        return None
    return {"median": statistics.median(v), "min": min(v), "max": max(v), "n": len(v),
            "values": v}


def fmt_rate(s, unit=""):
    if not s:
        return "n/a"
    m = s["median"]
    return f"{m:,.0f}{unit} ({s['min']:,.0f}–{s['max']:,.0f})"


def loadavg():
    return os.getloadavg()


def machine():
    """What the numbers were measured on."""
    info = {"cores": os.cpu_count(), "kernel": platform.release(),
            "python": platform.python_version()}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo") as f:
            info["mem_gib"] = round(int(f.readline().split()[1]) / 2**20, 1)
    except OSError:
        pass
    try:
        info["os"] = [ln.split("=", 1)[1].strip().strip('"') for ln in open("/etc/os-release")
                      if ln.startswith("PRETTY_NAME=")][0]
    except (OSError, IndexError):
        pass
    vers = {}
    for pkg in ("libjpeg62-turbo", "libhdf5-103-1", "liblmdb0", "python3-pil", "python3-h5py",
                "python3-lmdb", "python3-opencv", "python3-torch", "libvips-tools",
                "imagemagick-6.q16", "python3-numpy", "mate-backgrounds",
                "plasma-workspace-wallpapers", "python3-skimage"):
        try:
            # one line per installed architecture (the 32-bit CI adds :i386 and :armhf copies)
            out = subprocess.run(["dpkg-query", "-W", "-f", "${Version}\n", pkg],
                                 capture_output=True, text=True).stdout.split()
            v = "/".join(dict.fromkeys(out))
        except OSError:
            v = ""
        if v:
            vers[pkg] = v
    info["packages"] = vers
    return info


class Results:
    """Every measurement of a run, saved as JSON after each addition (a crash keeps what was
    measured): list of {section, group, name, metric: summary, ...}."""

    def __init__(self, path, meta):
        self.path = path
        self.data = {"meta": meta, "rows": []}
        self.save()

    def add(self, section, group, name, **fields):
        row = {"section": section, "group": group, "name": name}
        row.update(fields)
        self.data["rows"].append(row)
        self.save()
        return row

    def save(self):
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.data, f, indent=1)
        os.replace(tmp, self.path)

    def find(self, section, group=None, name=None):
        return [r for r in self.data["rows"] if r["section"] == section
                and (group is None or r["group"] == group) and (name is None or r["name"] == name)]


def repeat(reps, fn):
    """Call fn() REPS times; returns the list of results that did not fail and the last error."""
    got, err = [], None
    for _ in range(reps):
        try:
            got.append(fn())
        except Failed as e:
            err = str(e)
            log(f"    failed: {err.splitlines()[0][:300]}")
            for ln in err.splitlines()[1:][-6:]:
                log(f"      {ln[:300]}")
    return got, err
