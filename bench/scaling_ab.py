#!/usr/bin/python3
"""-j scaling of dataconv, interleaved: raw and JPEG q70 into HDF5 and LMDB at each -j, paired
ratios to -j1 (the README table "what scales with -j"). Each VARIANT is a folder holding
dataconv and libdata.so (e.g. a build folder); the list holds absolute paths of photos
(bench/make_photos.py DIR 2000, then find DIR -name "*.jpg" | sort > LIST).

Usage: bench/scaling_ab.py VARIANT[,VARIANT...] ROUNDS JOBS LIST, e.g.
    bench/scaling_ab.py build 3 1,2,4 /tmp/list.txt
"""
import os, resource, subprocess, sys, time, statistics, shutil
variants = sys.argv[1].split(",")          # dirs with dataconv + libdata.so
rounds = int(sys.argv[2])
jobs = [int(j) for j in sys.argv[3].split(",")]
lst = sys.argv[4]
res = {}
for r in range(rounds):
    for out in ("h5", "lmdb"):
        for q in ("raw", "q70"):
            for v in variants:
                for j in jobs:
                    o = f"/tmp/sab.{out}"
                    shutil.rmtree(o, ignore_errors=True)
                    if os.path.exists(o): os.remove(o)
                    cmd = [f"{v}/dataconv", "-q", "--list", lst, "--root", "/", o, "--resize", "224", "--mode", "pad", "-j", str(j)]
                    if q == "q70": cmd += ["--quality", "70"]
                    env = dict(os.environ, LD_LIBRARY_PATH=v)
                    t0 = time.time(); ru0 = os.times(); f0 = resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt
                    subprocess.run(cmd, check=True, env=env)
                    t1 = time.time(); ru1 = os.times(); f1 = resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt
                    cpu = (ru1.children_user - ru0.children_user) + (ru1.children_system - ru0.children_system)
                    res.setdefault((out, q, os.path.basename(v), j), []).append((t1 - t0, cpu, f1 - f0))
    print(f"round {r+1} done, load {os.getloadavg()[0]:.2f}", file=sys.stderr, flush=True)
n = sum(1 for _ in open(lst))
for (out, q, v, j), xs in sorted(res.items()):
    w = statistics.median(x[0] for x in xs); c = statistics.median(x[1] for x in xs)
    rng = f"{min(n/x[0] for x in xs):.0f}-{max(n/x[0] for x in xs):.0f}"
    pf = statistics.median(x[2] for x in xs)  # page faults (minor), the whole run
    print(f"{out:4} {q:3} {v:5} -j{j}: {n/w:6.0f} img/s ({rng}), CPU {1000*c/n:.3f} ms/img, {pf:,.0f} page faults")
for out in ("h5", "lmdb"):
    for q in ("raw", "q70"):
        for v in variants:
            v = os.path.basename(v)
            base = res[(out, q, v, 1)]
            for j in jobs[1:]:
                xs = res[(out, q, v, j)]
                ratios = [b[0] / x[0] for b, x in zip(base, xs)]
                print(f"{out:4} {q:3} {v:5} -j{j}/-j1 wall ratio median {statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f}); CPU/img ratio {statistics.median(x[1] for x in xs)/statistics.median(b[1] for b in base):.2f}")
