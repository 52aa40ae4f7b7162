#!/usr/bin/python3
"""The report of bench/run: a Markdown page (tables, ratios, the machine) and PNG charts
(matplotlib, Agg) from the results JSON of one run.

    suite_report.py RESULTS.json OUTDIR     (writes OUTDIR/benchmarks.md and OUTDIR/bench_*.png)
"""
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

COLORS = {"dataconv": "#1f6fb4", "libdata C": "#1f6fb4", "libdata Python": "#5aa0dc",
          "Pillow": "#e08a2c", "OpenCV": "#c9503c", "vips": "#7a5aa8", "magick": "#9a9a9a",
          "h5py": "#e08a2c", "python-lmdb": "#c9503c", "DataLoader": "#6a9a3a"}


def med(s):
    return s["median"] if s else None


def rng(s, fmt="{:,.0f}"):
    if not s:
        return "n/a"
    if s["n"] == 1:
        return fmt.format(s["median"])
    return f"{fmt.format(s['median'])} ({fmt.format(s['min'])}–{fmt.format(s['max'])})"


def ratio(a, b):
    if not a or not b:
        return "–"
    r = a / b
    return f"{r:.2f}×" if r < 10 else f"{r:.0f}×" if r >= 100 else f"{r:.1f}×"


def groups(rows, section):
    out = {}
    for r in rows:
        if r["section"] == section:
            out.setdefault(r["group"], []).append(r)
    return out


def convert_tables(rows, cores):
    g = groups(rows, "convert")
    lines = []
    for name, rs in g.items():
        kind = name.split(" → ")[0]
        base_name = "Pillow + python-lmdb" if name.endswith("LMDB") else "Pillow + h5py"
        base_group = name if not name.endswith("files") else f"{kind} → HDF5"
        base = next((med(r.get("ips")) for r in g.get(base_group, [])
                     if r["name"] == base_name), None)
        lines += [f"**{name}** ({rs[0].get('images', '?')} images)", "",
                  f"| tool | images/s, median (range) | × {base_name} | CPU ms/image "
                  "| peak RSS MiB |", "|---|---:|---:|---:|---:|"]
        for r in rs:
            if r.get("error") and not r.get("ips"):
                lines.append(f"| {r['name']} | failed: {r['error'].splitlines()[0][:80]} | | | |")
                continue
            lines.append(f"| {r['name']} | {rng(r['ips'])} | {ratio(med(r['ips']), base)} | "
                         f"{rng(r['cpu_ms'], '{:.2f}')} | {rng(r['rss_mb'], '{:.0f}')} |")
        lines.append("")
        lines += decode_limit_lines(rows, name)
    return lines


def decode_limit_lines(rows, group):
    """The ratio of dataconv -j1 to libjpeg-turbo decoding the same files alone (section
    convlimit of suite_convert.decode_limit), for the group it was measured on."""
    lim = next((r for r in rows if r["section"] == "convlimit" and r["group"] == group), None)
    if not lim:
        return []
    if not lim.get("ratio_wall"):
        return [f"Decode-only limit: not measured ({(lim.get('error') or '?').splitlines()[0]})",
                ""]
    return [f"Decode-only limit, the same {lim['images']} files, run right before each "
            f"`dataconv -j1`: libjpeg-turbo alone {rng(lim['dec_ips'])} images/s "
            f"({rng(lim['dec_cpu'], '{:.2f}')} CPU ms/image) against dataconv -j1 "
            f"{rng(lim['conv_ips'])} images/s ({rng(lim['conv_cpu'], '{:.2f}')} CPU ms/image): "
            f"**dataconv -j1 = {rng(lim['ratio_wall'], '{:.2f}')} of decode alone by wall time, "
            f"{rng(lim['ratio_cpu'], '{:.2f}')} by CPU time** (goal ≥ 0.75).", ""] + \
        ceiling_lines(lim) + quality_lines(lim)


def quality_lines(lim):
    """PSNR of dataconv's output against Pillow's decode + LANCZOS resize (issue 16 keeps it
    within 0.1 dB while conversion gets faster), with the users' scripts' resizes for scale."""
    q = lim.get("psnr")
    if not q:
        return []
    d = q["dataconv"]
    return [f"Quality of those pixels, the first {d['n']} photos against Pillow's decode + "
            f"LANCZOS resize to 224x224: **dataconv {d['mean']:.2f} dB** mean PSNR (worst "
            f"{d['worst']:.2f}); the scripts' resizes of the same photos: Pillow's default "
            f"filter {q['pil_default']['mean']:.2f} dB, OpenCV INTER_LINEAR "
            f"{q['cv2_linear']['mean']:.2f} dB.", ""]


def ceiling_lines(lim):
    """(i) decode alone, (ii) libdata's decode + resize in memory (the ceiling of any
    conversion that makes these pixels), (iii) dataconv -j1, and their ratios."""
    if not lim.get("ceil_ips"):
        return []
    return ["| same files, 1 thread | images/s, median (range) | CPU ms/image |",
            "|---|---:|---:|",
            f"| (i) libjpeg-turbo decode alone, in memory | {rng(lim['dec_ips'])} | "
            f"{rng(lim['dec_cpu'], '{:.2f}')} |",
            f"| (ii) libdata decode + Lanczos-3 resize to CHW, in memory, no I/O | "
            f"{rng(lim['ceil_ips'])} | {rng(lim['ceil_cpu'], '{:.2f}')} (resize "
            f"{rng(lim['ceil_resize_cpu'], '{:.2f}')}) |",
            f"| (iii) dataconv -j1 → HDF5 | {rng(lim['conv_ips'])} | "
            f"{rng(lim['conv_cpu'], '{:.2f}')} |", "",
            f"Ratios by wall time (by CPU time): (iii)/(i) = {rng(lim['ratio_wall'], '{:.2f}')} "
            f"({rng(lim['ratio_cpu'], '{:.2f}')}); **(ii)/(i) = "
            f"{rng(lim['ceil_ratio_wall'], '{:.2f}')} ({rng(lim['ceil_ratio_cpu'], '{:.2f}')})**, "
            f"the ceiling of any conversion producing these pixels with this resize; "
            f"(iii)/(ii) = {rng(lim['conv_ceil_wall'], '{:.2f}')} "
            f"({rng(lim['conv_ceil_cpu'], '{:.2f}')}).", ""]


def read_tables(rows, cores):
    g = groups(rows, "read")
    lim = {r["name"]: r for r in rows if r["section"] == "limit"}
    # raw batches: against memcpy on one core (issue 16's limit), cold reading against dd
    mem_1 = next((med(r["sps"]) for r in lim.values() if r["group"] == "memcpy"
                  and r.get("threads") == 1), None)
    dd = next((med(r["sps"]) for r in lim.values() if r["group"] == "dd"), None)
    dec_all = next((med(r["sps"]) for n, r in lim.items() if n.startswith("libjpeg-turbo 1 thread x")),
                   None)
    lines = []
    for name, rs in g.items():
        cold = name.endswith("cold cache")
        limit = dec_all if name.startswith("JPEG") else dd if cold else mem_1
        lname = (f"libjpeg-turbo × {cores}" if name.startswith("JPEG")
                 else "dd, cold" if cold else "memcpy, 1 thread")
        ref = next((med(r["sps"]) for r in rs if r["name"].startswith("libdata C, HDF5")
                    and r.get("threads") == cores), None)
        lines += [f"**{name}**, batches of 256", "",
                  "| reader | samples/s, median (range) | MB/s | libdata C ÷ this | "
                  f"% of {lname} | peak RSS MiB |", "|---|---:|---:|---:|---:|---:|"]
        for r in rs:
            s = med(r.get("sps"))
            if not s:
                err = (r.get("error") or "no result").splitlines()[0][:80]
                lines.append(f"| {r['name']} | failed: {err} | | | | |")
                continue
            mbs = f"{s * 150528 / 1e6:,.0f}"
            pct = f"{100 * s / limit:.0f}%" if limit else "–"
            if r.get("ratio_dd"):  # cold: the median of per-pair ratios (suite_read.cold)
                pct = (f"{100 * med(r['ratio_dd']):.0f}% ({100 * r['ratio_dd']['min']:.0f}–"
                       f"{100 * r['ratio_dd']['max']:.0f}%) per pair")
            lines.append(f"| {r['name']} | {rng(r['sps'])} | {mbs} | {ratio(ref, s)} | {pct} | "
                         f"{rng(r['rss_mb'], '{:.0f}')} |")
        lines.append("")
    return lines


def limit_table(rows):
    lines = ["| limit | value, median (range) | as samples/s |", "|---|---:|---:|"]
    for r in rows:
        if r["section"] != "limit":
            continue
        if r["group"] == "memcpy":
            lines.append(f"| {r['name']} (NumPy copyto, 256 MiB) | {rng(r['gbs'], '{:.1f}')} GB/s"
                         f" | {rng(r['sps'])} of 3×224×224 |")
        elif r["group"] in ("dd", "dd_direct", "pread"):
            if not r.get("gbs") or not r["gbs"].get("n"):
                err = (r.get("error") or "no result").splitlines()[0][:80]
                lines.append(f"| {r['name']} | not measured: {err} | |")
                continue
            lines.append(f"| {r['name']} | {rng(r['gbs'], '{:.2f}')} GB/s"
                         f" | {rng(r['sps'])} of 3×224×224 |")
        else:
            lines.append(f"| {r['name']} | {rng(r['sps'])} images/s | |")
    return lines + [""]


def rrc_table(rows):
    """bench/rrc_bench.py's rows: RandomResizedCrop(224) + flip, samples/s per core."""
    rs = [r for r in rows if r["section"] == "rrc"]
    if not rs:
        return []
    t = rs[0].get("threads", "?")
    lines = ["### Random resized crop", "",
             f"RandomResizedCrop(224) + RandomHorizontalFlip, uint8 output, {t} threads (libdata) "
             f"or DataLoader worker processes (torchvision): samples per CPU second of the "
             "whole pipeline (threads and worker processes), and wall samples/s divided by "
             "the threads (bench/rrc_bench.py). Goals: (a) ≥ 1.5× (b), (a) ≥ 4× (c).", "",
             "| pipeline | samples per CPU s | vs (b) | vs (c) | wall samples/s per thread |",
             "|---|---:|---:|---:|---:|"]
    b = med(rs[1]["sps_core"]) if len(rs) > 1 else None
    c = med(rs[2]["sps_core"]) if len(rs) > 2 else None
    for r in rs:
        lines.append(f"| {r['name']} | {rng(r['sps_core'])} | {ratio(med(r['sps_core']), b)} | "
                     f"{ratio(med(r['sps_core']), c)} | {rng(r.get('sps_wall'))} |")
    for bd in (r for r in rows if r["section"] == "rrc_bound"):
        on = ("the recipe's JPEGs (restart markers), of (a')/(b')"
              if bd["name"].endswith("recipe") else "the photos, of (a)/(b)")
        lines += ["", f"The bound on {on} (bench/rrc_rate: the same boxes, one thread, files "
                  f"in memory): box decode alone is {bd['decode_ratio']:.2f}× full decode "
                  f"({bd['box_us']:.0f} vs {bd['full_us']:.0f} µs per image); with the "
                  f"resampling both share, the ratio can at most be {bd['bound']:.2f}."]
    return lines + [""]


def memory_tables(rows):
    lines = []
    for sec, what, unit in (("memconv", "conversion (raw 224×224, all cores for dataconv)",
                             "images"),
                            ("memread", "reading one shuffled epoch (uint8, batch 256)",
                             "samples")):
        g = groups(rows, sec)
        if not g:
            continue
        sizes = sorted({int(r["name"]) for rs in g.values() for r in rs})
        extra = ""
        if sec == "memread":
            gib = {int(r["name"]): r.get("dataset_gib") for rs in g.values() for r in rs}
            extra = " (" + ", ".join(f"{s}: {gib[s]:.2f} GiB" for s in sizes) + ")"
        lines += [f"**Peak RSS (private RSS) in MiB of {what}** against dataset size in "
                  f"{unit}{extra}", "",
                  "| tool | " + " | ".join(f"{s:,}" for s in sizes) + " |",
                  "|---|" + "---:|" * len(sizes)]
        for name, rs in g.items():
            by = {int(r["name"]): r for r in rs}
            cells = []
            for s in sizes:
                r = by.get(s)
                c = f"{med(r['rss_mb']):,.0f}" if r and r.get("rss_mb") else "–"
                if r and r.get("anon_mb"):
                    c += f" ({med(r['anon_mb']):,.0f})"
                cells.append(c)
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        lines.append("")
    return lines


def key_ratios(rows, cores):
    out = []
    g = groups(rows, "convert")

    def ips(group, name):
        return next((med(r.get("ips")) for r in g.get(group, []) if r["name"] == name), None)
    for group in g:
        if group.endswith("files"):
            continue
        base = "Pillow + python-lmdb" if group.endswith("LMDB") else "Pillow + h5py"
        cv = base.replace("Pillow", "OpenCV")
        one, allc, b, c = (ips(group, "dataconv -j1"), ips(group, f"dataconv -j{cores}"),
                           ips(group, base), ips(group, cv))
        over = ips(group, f"dataconv -j{2 * cores}")
        out.append(f"- convert {group}: dataconv -j1 {ratio(one, b)} {base}, "
                   f"{ratio(one, c)} {cv}; -j{cores} {ratio(allc, b)} {base} "
                   f"(scaling -j{cores}/-j1 {ratio(allc, one)}, goal ≥ 1.8×; "
                   f"-j{2 * cores} beyond the cores / -j{cores} {ratio(over, allc)}, goal ≥ 1)")
        lim = next((r for r in rows if r["section"] == "convlimit" and r["group"] == group
                    and r.get("ratio_wall")), None)
        if lim:
            out.append(f"- convert {group}: dataconv -j1 = {med(lim['ratio_wall']):.2f} of "
                       f"libjpeg-turbo decode alone of the same files by wall time, "
                       f"{med(lim['ratio_cpu']):.2f} by CPU time (goal ≥ 0.75)")
            if lim.get("ceil_ratio_wall"):
                out.append(f"- convert {group}: ceiling, libdata decode + resize in memory = "
                           f"{med(lim['ceil_ratio_wall']):.2f} of decode alone by wall time, "
                           f"{med(lim['ceil_ratio_cpu']):.2f} by CPU time; dataconv -j1 = "
                           f"{med(lim['conv_ceil_wall']):.2f} of that ceiling by wall time")
    rg = groups(rows, "read")
    lim = [r for r in rows if r["section"] == "limit"]
    memc = next((med(r["sps"]) for r in lim if r["group"] == "memcpy"
                 and r.get("threads") == cores), None)
    mem1 = next((med(r["sps"]) for r in lim if r["group"] == "memcpy" and r.get("threads") == 1),
                None)
    dec = next((med(r["sps"]) for r in lim if r["name"].startswith("libjpeg-turbo 1 thread x")),
               None)
    dd = next((med(r["sps"]) for r in lim if r["group"] == "dd"), None)
    # issue 16's goals: raw batches against memcpy on one core, cold block shuffle against dd
    goals = {"uint8, shuffled": 0.8, "uint8, sequential": 0.85}
    for group, rs in rg.items():
        ref = next((r for r in rs if r["name"].startswith("libdata C, HDF5")
                    and r.get("threads") == cores), None)
        if not ref or not med(ref.get("sps")):
            continue
        s = med(ref["sps"])
        if group.endswith("cold cache"):
            rd, rdd = ref.get("ratio_dd"), ref.get("ratio_direct")
            ddr = next((r for r in lim if r["group"] == "dd"), {})
            if rd:  # interleaved pairs (suite_read.Reading.cold)
                out.append(f"- read {group} ({ref.get('file_gb', 0):.1f} GB file, "
                           f"{rd['n']} interleaved pairs): libdata C {rng(ref['gbs'], '{:.2f}')} "
                           f"GB/s, dd {rng(ddr.get('gbs'), '{:.2f}')} GB/s: **median of the "
                           f"per-pair ratios {rd['median']:.2f} ({rd['min']:.2f}–{rd['max']:.2f}) "
                           "of dd of the file, cold** (goal ≥ 0.9)"
                           + (f"; {rdd['median']:.2f} ({rdd['min']:.2f}–{rdd['max']:.2f}) of "
                              "dd iflag=direct" if rdd else "")
                           + ". Each run follows a drop of the file's pages and a touch of as "
                           "much free memory (bench/suite_read.py: on a VM with free page "
                           "reporting, the page cache's 2 MiB folios otherwise come from memory "
                           "handed back to the host, which made dd vary 0.36–1.7 GB/s)")
            else:
                out.append(f"- read {group}: libdata C {s:,.0f} samples/s = "
                           + (f"{s / dd:.2f} of dd of the file, cold (goal ≥ 0.9)" if dd else
                              "dd not measured"))
            continue
        peers = [(r["name"], med(r["sps"])) for r in rs if r.get("tool") not in
                 ("libdata C", "libdata Python") and med(r.get("sps"))]
        best = max(peers, key=lambda p: p[1]) if peers else None
        lim_txt = (f"{100 * s / dec:.0f}% of libjpeg-turbo × {cores}" if group.startswith("JPEG")
                   else f"{100 * s / memc:.0f}% of memcpy ({cores} threads), "
                   f"{100 * s / mem1:.0f}% of 1-thread memcpy" if memc and mem1 else "")
        if group in goals and mem1:
            lim_txt += f" = {s / mem1:.2f} of memcpy on one core (goal ≥ {goals[group]})"
        pyrow = {bool(r.get("views")): r for r in rs if r.get("tool") == "libdata Python"
                 and med(r.get("sps"))}
        pyr = med(pyrow[False]["sps"]) if False in pyrow else None

        def py_ratio(v):  # the median of the pairs with libdata C when measured in pairs
            rc = pyrow[v].get("ratio_c") or {}
            if rc.get("n"):
                return f"{rc['median']:.2f} ({rc['min']:.2f}–{rc['max']:.2f}, {rc['n']} pairs)"
            return f"{med(pyrow[v]['sps']) / s:.2f}"
        py_c = "; ".join(f"libdata Python {k} {py_ratio(v)} of libdata C" for k, v in
                         (("copies", False), ("views", True)) if v in pyrow)
        out.append(f"- read {group}: libdata C {s:,.0f} samples/s = {lim_txt}; "
                   + (f"{ratio(s, best[1])} the best peer ({best[0]}); " if best else "")
                   + (f"libdata Python {ratio(pyr, best[1])} that peer" if pyr and best else "")
                   + (f"; {py_c} (goal ≥ 0.9)" if py_c else ""))
    return out


# issue 16's table: each path against its limit measured in the same run, with its goal
def goals(rows, cores):
    """[(path, ratio, (lo, hi) or None, goal, what it is measured against)], from the rows the
    other sections report; paths that were not measured are left out."""
    out = []
    for lim in (r for r in rows if r["section"] == "convlimit" and r.get("ratio_wall")):
        w = lim["ratio_wall"]
        ceil = (f"; decode + libdata's resize in memory, no I/O: {med(lim['ceil_ratio_wall']):.2f}"
                if lim.get("ceil_ratio_wall") else "")
        out.append((f"dataconv -j1, {lim['group']}", w["median"], (w["min"], w["max"]), 0.75,
                    f"libjpeg-turbo decode alone of the same files, wall time{ceil}"))
    lim = [r for r in rows if r["section"] == "limit"]
    mem1 = next((med(r["sps"]) for r in lim if r["group"] == "memcpy" and r.get("threads") == 1),
                None)
    # the kernel's page-cache copy by as many threads as the reader's: what it is made of
    pread = next((med(r["sps"]) for r in lim if r["group"] == "pread"
                  and r.get("threads") == cores and med(r.get("sps"))), None)
    for group, rs in groups(rows, "read").items():
        ref = next((r for r in rs if r["name"].startswith("libdata C, HDF5")
                    and r.get("threads") == cores and med(r.get("sps"))), None)
        if not ref:
            continue
        if group == "uint8, block shuffle, cold cache" and ref.get("ratio_dd"):
            d = ref["ratio_dd"]
            out.append((f"reader, {group}", d["median"], (d["min"], d["max"]), 0.9,
                        f"dd of the file, cold (median of {d['n']} interleaved pairs)"))
        elif group in ("uint8, shuffled", "uint8, sequential") and mem1:
            made_of = (f"; pread of the same warm file by {cores} threads, no consumer: "
                       f"{pread / mem1:.2f} of it, the reader {med(ref['sps']) / pread:.2f} of "
                       f"that" if pread else "")
            rng_ = ((ref["sps"]["min"] / mem1, ref["sps"]["max"] / mem1)
                    if ref["sps"].get("min") else None)  # of the reader's repeats
            out.append((f"reader, {group}", med(ref["sps"]) / mem1, rng_,
                        0.8 if group == "uint8, shuffled" else 0.85,
                        "memcpy, one core" + made_of))
            for r in rs:
                if r.get("tool") == "libdata Python" and med(r.get("sps")):
                    rc = r.get("ratio_c") or {}
                    what = f"Python {'views' if r.get('views') else 'copies'}, {group}"
                    if rc.get("n"):  # per-pair ratios (suite_read.Reading.measure)
                        out.append((what, rc["median"], (rc["min"], rc["max"]), 0.9,
                                    "libdata C (dataconv bench), same file and options, run "
                                    f"right before or after it (median of {rc['n']} pairs)"))
                    else:
                        out.append((what, med(r["sps"]) / med(ref["sps"]), None, 0.9,
                                    "libdata C (dataconv bench), same file and options"))
    rr = [r for r in rows if r["section"] == "rrc"]
    if len(rr) >= 3:
        a, b, c = (med(r["sps_core"]) for r in rr[:3])
        bound = next((r["bound"] for r in rows if r["section"] == "rrc_bound"), None)
        out.append(("random resized crop, box decoder (a)", a / b, None, 1.5,
                    "(b) full decode + crop + resize, per core"
                    + (f"; bound of the box decoder: {bound:.2f}" if bound else "")))
        out.append(("random resized crop, box decoder (a)", a / c, None, 4.0,
                    "(c) torchvision ImageFolder + DataLoader, per core"))
        key = {r["name"].split(" ")[0]: r for r in rr}
        if "(a')" in key and "(b')" in key and med(key["(b')"].get("sps_core")):
            a1, b1 = med(key["(a')"]["sps_core"]), med(key["(b')"]["sps_core"])
            bound = next((r["bound"] for r in rows if r["section"] == "rrc_bound"
                          and r["name"] == "bound, recipe"), None)
            out.append(("random resized crop, recipe with restart markers (a')", a1 / b1, None,
                        1.5, "(b') full decode + crop + resize of the same file, per core (its "
                        "restart markers make a full decode ~6 % slower than without)"
                        + (f"; bound of the box decoder: {bound:.2f}" if bound else "")))
            if "(c')" in key and med(key["(c')"].get("sps_core")):
                out.append(("random resized crop, recipe with restart markers (a')",
                            a1 / med(key["(c')"]["sps_core"]), None, 4.0,
                            "(c') torchvision ImageFolder + DataLoader on the same recipe's "
                            "JPEGs as files (without markers), per core"))
    return out


def goal_table(rows, cores):
    gs = goals(rows, cores)
    if not gs:
        return []
    lines = ["| path | ratio to its limit, median (range) | goal | limit, measured in this run |",
             "|---|---:|---:|---|"]
    for path, v, r, goal, what in gs:
        rtxt = f"{v:.2f}" + (f" ({r[0]:.2f}–{r[1]:.2f})" if r else "")
        mark = "met" if v >= goal else "not met"
        lines.append(f"| {path} | {rtxt} | ≥ {goal:g} ({mark}) | {what} |")
    return lines + [""]


def save_chart(plt, fig, foot, rect, outdir, name):
    """The charts' common end: the footnote, the layout within rect, OUTDIR/NAME at 90 dpi."""
    fig.text(0.01, 0.005, foot, fontsize=7)
    fig.tight_layout(rect=rect)
    p = os.path.join(outdir, name)
    fig.savefig(p, dpi=90)
    plt.close(fig)
    return p


def goal_chart(rows, cores, foot, outdir, plt):
    gs = goals(rows, cores)
    if not gs:
        return None
    fig, ax = plt.subplots(figsize=(11, 0.42 * len(gs) + 1.4))
    names = [f"{p}\nvs {w.split(';')[0].split(',')[0]}" for p, _, _, _, w in gs][::-1]
    vals = [v / g for _, v, _, g, _ in gs][::-1]
    err = [[(v - r[0]) / g if r else 0 for _, v, r, g, _ in gs][::-1],
           [(r[1] - v) / g if r else 0 for _, v, r, g, _ in gs][::-1]]
    cols = ["#2a7ab0" if x >= 1 else "#d9822b" for x in vals]
    ax.barh(range(len(vals)), vals, xerr=err, color=cols, capsize=2, error_kw={"lw": 0.8})
    ax.axvline(1, color="k", ls="--", lw=1)
    ax.set_yticks(range(len(vals)))
    ax.set_yticklabels(names, fontsize=7)
    for i, (_, v, _, g, _) in enumerate(gs[::-1]):
        ax.text(vals[i] + max(err[1][i], 0) + 0.02, i, f"{v:.2f} (goal {g:g})", va="center",
                fontsize=7)
    ax.set_xlim(0, max(vals + [1]) * 1.35)
    ax.set_xlabel("ratio to its limit ÷ goal (dashed line: the goal; orange: not met)",
                  fontsize=8)
    ax.set_title("Against the machine's limits, measured in the same run (issue 16)",
                 fontsize=10)
    p = save_chart(plt, fig, foot, (0, 0.03, 1, 1), outdir, "bench_limits.png")
    return p


def charts(data, outdir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker
    rows, meta = data["rows"], data["meta"]
    cores = meta["machine"]["cores"]
    made = []
    foot = (f"{meta['machine'].get('cpu', '?')}, {cores} cores, "
            f"{meta['machine'].get('mem_gib', '?')} GiB; load {meta.get('load_before', '?')}; "
            f"{meta.get('date', '')}")

    def bars(ax, rs, key, title, limit=None, limit_name=None):
        rs = [r for r in rs if r.get(key)]
        names = [r["name"] for r in rs][::-1]
        vals = [r[key]["median"] for r in rs][::-1]
        lo = [r[key]["median"] - r[key]["min"] for r in rs][::-1]
        hi = [r[key]["max"] - r[key]["median"] for r in rs][::-1]
        cols = [COLORS.get(r.get("tool"), "#888") for r in rs][::-1]
        # log axis from a fixed decade below the smallest value: bar lengths stay comparable
        left = 10 ** math.floor(math.log10(min(vals)) - 0.3)
        ax.barh(range(len(vals)), [v - left for v in vals], left=left, xerr=[lo, hi],
                color=cols, capsize=2, error_kw={"lw": 0.8})
        ax.set_yticks(range(len(vals)))
        ax.set_yticklabels(names, fontsize=8)
        ax.set_xscale("log")
        ax.set_title(title, fontsize=10)
        for i, (v, h) in enumerate(zip(vals, hi)):
            ax.text((v + h) * 1.08, i, f"{v:,.0f}", va="center", fontsize=7)
        if limit:
            ax.axvline(limit, color="k", ls="--", lw=1)
            ax.text(limit * 1.05, -0.45, limit_name, fontsize=7, va="bottom", ha="left",
                    rotation=90)
        ax.set_xlim(left, max([v + h for v, h in zip(vals, hi)] + [limit or 0]) * 3)
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(
            lambda x, _: f"{x:,.0f}"))

    g = groups(rows, "convert")
    if g:
        n = len(g)
        fig, axes = plt.subplots((n + 1) // 2, 2, figsize=(13, 2.1 * ((n + 1) // 2) + 0.8))
        for ax, (name, rs) in zip(axes.flat, g.items()):
            lim = next((r for r in rows if r["section"] == "convlimit" and r["group"] == name
                        and r.get("dec_ips")), None)
            bars(ax, rs, "ips", f"{name}: images/s (log)",
                 limit=med(lim["dec_ips"]) if lim else None,
                 limit_name="libjpeg-turbo decode alone" if lim else None)
        for ax in list(axes.flat)[n:]:
            ax.axis("off")
        fig.suptitle("Conversion, ~500×375 photos → 224×224 (median, bars: min–max)",
                     fontsize=11)
        p = save_chart(plt, fig, foot, (0, 0.02, 1, 0.97), outdir, "bench_convert.png")
        made.append(p)

    g = groups(rows, "read")
    lim = [r for r in rows if r["section"] == "limit"]
    mem1 = next((med(r["sps"]) for r in lim if r["group"] == "memcpy"
                 and r.get("threads") == 1), None)
    ddc = next((med(r["sps"]) for r in lim if r["group"] == "dd"), None)
    dec = next((med(r["sps"]) for r in lim if r["name"].startswith("libjpeg-turbo 1 thread x")),
               None)
    if g:
        n = len(g)
        fig, axes = plt.subplots((n + 1) // 2, 2, figsize=(13, 2.6 * ((n + 1) // 2) + 0.8))
        for ax, (name, rs) in zip(axes.flat, g.items()):
            if name.startswith("JPEG"):
                bars(ax, rs, "sps", f"{name}: samples/s (log)", dec,
                     f"libjpeg-turbo 1 thread × {cores}")
            elif name.endswith("cold cache"):
                bars(ax, rs, "sps", f"{name}: samples/s (log)", ddc, "dd of the file, cold")
            else:
                bars(ax, rs, "sps", f"{name}: samples/s (log)", mem1, "memcpy, 1 thread")
        for ax in list(axes.flat)[n:]:
            ax.axis("off")
        fig.suptitle("Reading batches of 256 × 3×224×224 uint8 (median, bars: min–max; "
                     "dashed: the limit measured in the same run)", fontsize=11)
        p = save_chart(plt, fig, foot, (0, 0.02, 1, 0.97), outdir, "bench_read.png")
        made.append(p)

    gc, gr = groups(rows, "memconv"), groups(rows, "memread")
    if gc or gr:
        fig, axes = plt.subplots(2, 2, figsize=(14, 7.6))
        panels = []
        for row, key, what in ((0, "rss_mb", "peak RSS"),
                               (1, "anon_mb", "peak private RSS (RssAnon: no mapped files)")):
            panels += [(axes[row][0], gc, "images converted", f"Conversion (raw 224×224): {what}",
                        key, True),
                       (axes[row][1], gr, "dataset size, GiB",
                        f"Reading one shuffled epoch: {what}", key, False)]
        for ax, g, xl, title, key, by_count in panels:
            for name, rs in g.items():
                rs = [r for r in rs if r.get(key)]
                xs = [int(r["name"]) if by_count else r["dataset_gib"] for r in rs]
                ys = [r[key]["median"] for r in rs]
                tool = next((t for t in ("libdata Python", "libdata C", "dataconv", "Pillow",
                                         "h5py", "python-lmdb", "DataLoader")
                             if name.startswith(t)), "")
                ls = "--" if ("LMDB" in name or "lmdb" in name or "loop" in name) else "-"
                ax.plot(xs, ys, marker="o", ls=ls, label=name, color=COLORS.get(tool, "#888"))
            ax.set_xscale("log")
            xs_all = sorted({int(r["name"]) if by_count else round(r["dataset_gib"], 3)
                             for rs in g.values() for r in rs})
            ax.xaxis.set_major_locator(matplotlib.ticker.FixedLocator(xs_all))
            ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(
                lambda x, _: f"{x:,.0f}" if x >= 10 else f"{x:.2f}"))
            ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
            ax.set_ylim(bottom=0)
            ax.set_xlabel(xl)
            ax.set_ylabel("MiB")
            ax.set_title(title, fontsize=10)
            ax.grid(True, which="both", alpha=0.3)
            if ax in (axes[0][0], axes[0][1]):
                ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        fig.suptitle("Peak memory against dataset size", fontsize=11)
        p = save_chart(plt, fig, foot, (0, 0.03, 1, 0.95), outdir, "bench_memory.png")
        made.append(p)
    p = goal_chart(rows, cores, foot, outdir, plt)
    if p:
        made.insert(0, p)
    return made


def decode_scale_table(rows):
    """bench/decode_scale.py's rows: large photos, --decode-scale auto vs exact."""
    rs = [r for r in rows if r["section"] == "decode_scale"]
    if not rs:
        return []
    import decode_scale  # noqa: E402 (bench/, on the path of suite_main)
    return ["### Large photos: decode scale", "",
            f"{rs[0]['n']} JPEGs >= 1920 pixels on the longer side (crops of Debian's wallpapers, "
            "bench/decode_scale.py), `dataconv -j1`, `--decode-scale exact` and `auto` "
            "interleaved; PSNR of each auto sample against its exact one. Goal (issue 30): "
            "auto ≥ 2× exact at ≥ 4× downscale, PSNR median ≥ 45 dB, minimum ≥ 40 dB.", "",
            decode_scale.HEADER] + [decode_scale.line(r) for r in rs] + [""]


def masks_table(rows):
    """bench/masks_bench.py's rows: images with segmentation masks against images alone."""
    rs = [r for r in rows if r["section"] == "masks"]
    if not rs:
        return []
    import masks_bench  # noqa: E402 (bench/, on the path of suite_main)
    return ["## Segmentation masks", "",
            "Each photo with a palette PNG mask of its size (`--masks`, bench/masks_bench.py), "
            "against the same photos alone, interleaved: converting (`--resize 224 --mode pad`, "
            "HDF5) and reading (`dataconv bench`; the masks get the crop and mirror too). "
            "Medians (ranges) of the pairs.", "",
            masks_bench.HEADER] + [masks_bench.line(r) for r in rs] + [""]


def markdown(data, chart_paths, outdir):
    rows, meta = data["rows"], data["meta"]
    m = meta["machine"]
    cores = m["cores"]
    pk = m.get("packages", {})
    L = ["# Benchmarks", "",
         "Everything on this page was measured by **one run** of `bench/run"
         + (" --quick" if meta.get("quick") else "") + "` on one machine, on the same data, "
         "side by side: medians over repeats with the range (min–max) in parentheses.", "",
         "## Machine and run", "",
         f"- CPU: {m.get('cpu', '?')}, {cores} cores; memory {m.get('mem_gib', '?')} GiB; "
         f"{m.get('os', '?')}, Linux {m.get('kernel', '?')}; Python {m.get('python', '?')}",
         f"- date {meta.get('date')}; run took {meta.get('minutes', 0):.1f} min; "
         f"load average (1 min) {meta.get('load_before')} before, {meta.get('load_after')} after"
         + ("" if not meta.get("load_trace") else
            "; during the run (UTC time, 1-min load): " + ", ".join(meta["load_trace"]))
         + ("" if not meta.get("load_note") else f" — {meta['load_note']}"),
         f"- repeats per measurement: {meta.get('reps')}; {meta.get('libdata_version', '?')}, "
         f"{meta.get('build_type', '?')} build",
         "- peers from Debian packages: " + ", ".join(f"{k} {v}" for k, v in pk.items()), "",
         "Input: "
         f"{meta.get('photos')} JPEG photos (q90, 500×375, every 5th 375×500), random crops of "
         f"the photographs that Debian's python3-skimage, mate-backgrounds and "
         f"plasma-workspace-wallpapers ship ({meta.get('photo_sources', '?')} source photos; "
         "bench/suite_photos.py). Reading datasets were made from them by dataconv "
         "(224×224 squash, BGR; raw and JPEG q70).", ""]
    gt = goal_table(rows, cores)
    if gt:
        L += ["## Against the machine's limits", "",
              "Each path as a ratio to its limit, both measured in this run (issue 16's goals). "
              "The sections below give the figures, the ranges and how each was measured.", ""]
        L += gt
    L += ["## Key ratios", ""] + key_ratios(rows, cores) + [""]
    for p in chart_paths:
        L += [f"![{os.path.basename(p)}]({os.path.relpath(p, outdir)})", ""]
    L += ["## Conversion", "",
          "The folder → dataset conversion, page cache warm. images/s = images ÷ the tool's "
          "wall time (CLI tools) or the script's own time (Python scripts, interpreter start "
          "excluded); CPU ms/image = user + system time of all threads and child processes. "
          "vips and ImageMagick write one output file per image and no dataset at all "
          "(one process per file; a pool of 1 or all cores), compared with the Pillow + h5py "
          "script of the same storage kind.", ""]
    L += convert_tables(rows, cores)
    L += ["## Reading", "",
          "Batches of 256 × 3×224×224 uint8 NCHW. The C reader (`dataconv bench`, libdata's "
          "public API, touching one byte per 64-byte cache line of each batch) reads whole "
          "epochs after one untimed epoch; Python readers read for a fixed time after one warm-up batch, "
          "touching the batch the same way, and libdata Python's runs alternate with runs of the "
          "C reader, whose ratio they report. "
          "`libdata C ÷ this` is libdata's C reader on HDF5 with all cores divided by the "
          "row's rate. Before the warm rows every dataset is dropped from the page cache and "
          "read back once in file order, so that each run starts from the same cache state: a "
          "sequential read (or the conversion's writes) leaves large folios, which copy out ~20 % "
          "faster than the 4 KiB pages a reader's own cold epoch leaves "
          "(bench/warm_after_cold.sh).", ""]
    L += ["### Limits measured in the same run", ""] + limit_table(rows)
    L += read_tables(rows, cores)
    L += rrc_table(rows)
    L += decode_scale_table(rows)
    L += masks_table(rows)
    L += ["## Memory against dataset size", "",
          "Peak RSS: the larger of GNU time's maximum RSS and the sum of VmRSS over the whole "
          "process tree sampled every 20 ms (DataLoader workers are processes). Mapped files "
          "count once touched: python-lmdb maps the database, so its RSS includes the pages it "
          "read (clean page cache the kernel can drop at any time); libdata's LMDB reader walks "
          "LMDB's tree once, at open, into an index of the records' offsets, and reads records "
          "with pread: nothing of the database stays mapped. "
          "The private RSS in parentheses (the sampled peak of the summed RssAnon) leaves those "
          "out: it is the memory the tool allocated. h5py fancy indexing reads 2 batches per "
          "size (it runs at ~100 samples/s).", ""]
    L += memory_tables(rows)
    if meta.get("not_measured"):
        L += ["## Not measured", ""] + [f"- {x}" for x in meta["not_measured"]] + [""]
    L += ["## Rerun", "", "```", "bench/run            # full run, ~20 min on 2 idle cores; "
          "rewrites docs/benchmarks.md and docs/bench_*.png",
          "bench/run --quick    # a few minutes; report under the work folder", "```", ""]
    return "\n".join(L)


KEPT = "## Scale:"  # sections other scripts write (bench/scale.sh): kept across runs


def kept_sections(path):
    """The sections of an existing benchmarks.md that this report does not make (their heading
    starts with KEPT), up to the next heading; "" when there is none."""
    try:
        with open(path) as f:
            old = f.read()
    except OSError:
        return ""
    out, keep = [], False
    for line in old.splitlines():
        if line.startswith("## "):
            keep = line.startswith(KEPT)
        if keep:
            out.append(line)
    return "\n".join(out) + "\n\n" if out else ""


def write(results_path, outdir):
    with open(results_path) as f:
        data = json.load(f)
    os.makedirs(outdir, exist_ok=True)
    made = charts(data, outdir)
    md = markdown(data, made, outdir)
    path = os.path.join(outdir, "benchmarks.md")
    kept = kept_sections(path)
    if kept:  # before "Not measured" (or "Rerun"), where it was
        at = md.find("## Not measured") if "## Not measured" in md else md.find("## Rerun")
        md = md[:at] + kept + md[at:] if at >= 0 else md + "\n" + kept
    with open(path, "w") as f:
        f.write(md)
    return md, made


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    md, made = write(sys.argv[1], sys.argv[2])
    print(md)


if __name__ == "__main__":
    main()
