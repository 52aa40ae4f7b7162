#!/usr/bin/python3
"""Independent check (h5py, python-lmdb) of a sharded conversion's parts against a single run.

  shard_parts_check.py h5 SINGLE.h5 PART0.h5 PART1.h5 ...
  shard_parts_check.py lmdb SINGLE.lmdb PART0.lmdb PART1.lmdb ...

The parts, in order, must hold exactly the single run's samples (HDF5: /data or
/encoded+/offsets+/shape, /label, /filename, sample by sample; LMDB: every record, with the key
renumbered as the merge does: "%08d" of the merged index + the part key from its first '_'),
and carry the shard attributes of h5_format.h ("Shards"): shard_index = position,
shard_count = number of parts, the ranges [floor(K*L/N), floor((K+1)*L/N)) of listing_total L,
one run_id (16 lowercase hex digits) for all, the same note and class names as the single run.
Exit 0 when everything matches; otherwise prints what differs and exits 1.
"""
import json
import os
import re
import sys

import numpy as np


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def check_attrs(parts, attrs, single_meta):
    n = len(parts)
    run_ids = set()
    total = attrs[0]["listing_total"]
    listed = 0
    for k, (p, a) in enumerate(zip(parts, attrs)):
        if int(a["shard_index"]) != k or int(a["shard_count"]) != n:
            fail(f"{p}: shard_index/count {a['shard_index']}/{a['shard_count']}, expected {k}/{n}")
        lo, hi = k * total // n, (k + 1) * total // n
        if (int(a["shard_first"]), int(a["shard_listed"])) != (lo, hi - lo):
            fail(f"{p}: shard_first/listed {a['shard_first']}/{a['shard_listed']}, "
                 f"expected {lo}/{hi - lo} of {total}")
        if int(a["listing_total"]) != total:
            fail(f"{p}: listing_total {a['listing_total']} != {total}")
        if not re.fullmatch(r"[0-9a-f]{16}", str(a["run_id"])):
            fail(f"{p}: run_id {a['run_id']!r} is not 16 lowercase hex digits")
        run_ids.add(str(a["run_id"]))
        listed += int(a["shard_listed"])
        for key, want in single_meta.items():
            if a.get(key) != want:
                fail(f"{p}: {key} {a.get(key)!r} differs from the single run's {want!r}")
        if "--shard" in str(a.get("note", "")):
            fail(f"{p}: the note names --shard: {a['note']!r}")
    if len({str(a.get("note")) for a in attrs}) != 1:
        fail(f"the parts carry different notes: {sorted({str(a.get('note')) for a in attrs})}")
    if len(run_ids) != 1:
        fail(f"the parts carry different run_ids: {sorted(run_ids)}")
    if listed != total:
        fail(f"the parts list {listed} samples, listing_total is {total}")


def h5(single, parts):
    import h5py

    def attrs_of(f):
        d = {}
        for k, v in f.attrs.items():
            if isinstance(v, bytes):
                v = v.decode()
            elif isinstance(v, np.ndarray):
                v = [x.decode() if isinstance(x, bytes) else str(x) for x in v.tolist()]
            elif isinstance(v, np.generic):
                v = v.item()
            d[k] = v
        return d

    with h5py.File(single, "r") as s:
        sa = attrs_of(s)
        if any(k.startswith("shard_") for k in sa):
            fail(f"{single}: a single run has shard attributes")
        encoded = sa["storage"] == "encoded"
        want = {"label": s["label"][:], "filename": s["filename"][:]}
        fname_dtype = s["filename"].dtype
        if encoded:
            off = s["offsets"][:]
            enc = s["encoded"][:]
            want["samples"] = [enc[off[i]:off[i + 1]].tobytes() for i in range(len(off) - 1)]
            want["shape"] = s["shape"][:]
        else:
            want["data"] = s["data"][:]
    got = {k: [] for k in want}
    attrs = []
    for p in parts:
        with h5py.File(p, "r") as f:
            attrs.append(attrs_of(f))
            if f["filename"].dtype != fname_dtype:
                fail(f"{p}: /filename is {f['filename'].dtype}, the single run's {fname_dtype}")
            got["label"].append(f["label"][:])
            got["filename"].append(f["filename"][:])
            if encoded:
                off = f["offsets"][:]
                enc = f["encoded"][:]
                if off[0] != 0 or off[-1] != len(enc):
                    fail(f"{p}: /offsets {off[0]}..{off[-1]} do not span /encoded ({len(enc)})")
                got["samples"] += [enc[off[i]:off[i + 1]].tobytes() for i in range(len(off) - 1)]
                got["shape"].append(f["shape"][:].reshape(-1, 3))
            else:
                got["data"].append(f["data"][:])
    for k in want:
        if k == "samples":
            g = got[k]
            if len(g) != len(want[k]) or any(a != b for a, b in zip(g, want[k])):
                fail(f"encoded samples differ ({len(g)} vs {len(want[k])})")
            continue
        g = np.concatenate(got[k]) if got[k] else np.array([])
        if g.shape != want[k].shape or not np.array_equal(g, want[k]):
            fail(f"/{k} of the parts ({g.shape}) differs from the single run's ({want[k].shape})")
    keep = ("class_names", "num_classes", "storage", "channel_order", "quality", "resize_w",
            "resize_h", "resize_mode", "format", "format_version")
    check_attrs(parts, attrs, {k: sa[k] for k in keep if k in sa})
    print(f"{len(parts)} parts hold the single run's {len(want['label'])} samples "
          f"({'encoded' if encoded else 'raw'}), attributes consistent, run_id {attrs[0]['run_id']}")


def lmdb_(single, parts):
    from lmdb_records import records


    def sidecar(path):
        with open(os.path.join(path, "libdata.json")) as f:
            return json.load(f)

    want = records(single)
    got = []
    for p in parts:
        recs = records(p)
        for i, (k, v) in enumerate(recs):
            if not k.startswith(b"%08d_" % i):
                fail(f"{p}: key {k!r} is not numbered {i} within the part")
        got += recs
    merged = [(b"%08d" % i + k[k.index(b"_"):], v) for i, (k, v) in enumerate(got)]
    if len(merged) != len(want):
        fail(f"the parts hold {len(merged)} records, the single run {len(want)}")
    for i, (a, b) in enumerate(zip(merged, want)):
        if a != b:
            fail(f"record {i} differs: key {a[0]!r} vs {b[0]!r}, values equal: {a[1] == b[1]}")
    s = sidecar(single)
    keep = ("class_names", "num_classes", "storage", "channel_order", "quality", "resize_w",
            "resize_h", "resize_mode", "format", "format_version")
    check_attrs(parts, [sidecar(p) for p in parts], {k: s[k] for k in keep if k in s})
    print(f"{len(parts)} LMDB parts hold the single run's {len(want)} records, keys renumbered")


if __name__ == "__main__":
    if len(sys.argv) < 4 or sys.argv[1] not in ("h5", "lmdb"):
        print(__doc__)
        sys.exit(2)
    (h5 if sys.argv[1] == "h5" else lmdb_)(sys.argv[2], sys.argv[3:])
