"""A merged dataset (dataconv merge) equals a single-process conversion, read with h5py and
python-lmdb as the independent readers.

    merge_check.py PAIRS     PAIRS: lines "h5|lmdb SINGLE MERGED"

HDF5: /data, /label, /filename (raw) or each sample's bytes of /encoded cut out through
/offsets, its decoded pixels (PIL), /shape, /label, /filename (encoded) equal the single run's
sample by sample, with the same dtypes and shapes; the root attributes a single run writes are
equal (but note and source, which name the outputs); the merged file's /offsets is a real
dataset and the others virtual. LMDB: the same keys and values, record by record, and the same
libdata.json but for note and source (plus the kept shard_count, listing_total, run_id).
Prints one line per pair; exits 1 at the first difference.
"""
import io
import json
import sys

import h5py
from lmdb_records import records
import numpy as np
from PIL import Image

SKIP_ATTRS = {"note", "source", "shard_count", "listing_total", "run_id", "parts"}


def fail(msg):
    print("FAIL:", msg, file=sys.stderr)
    sys.exit(1)


def check_h5(single, merged):
    with h5py.File(single, "r") as a, h5py.File(merged, "r") as b:
        encoded = "encoded" in a
        names = ["label", "filename"] + (["shape", "offsets"] if encoded else ["data"])
        for n in names:
            x, y = a[n], b[n]
            if x.dtype != y.dtype or x.shape != y.shape:
                fail(f"{merged}: /{n} is {y.dtype} {y.shape}, single run {x.dtype} {x.shape}")
            u, v = x[()], y[()]
            if not np.array_equal(u, v):
                i = int(np.argmax(u != v)) if u.ndim == 1 else -1
                fail(f"{merged}: /{n} differs from {single} (first at {i})")
            want_virtual = n != "offsets"
            if y.is_virtual != want_virtual:
                fail(f"{merged}: /{n} virtual={y.is_virtual}, expected {want_virtual}")
        if encoded:
            ea, eb = a["encoded"][()], b["encoded"][()]
            if ea.dtype != eb.dtype or not b["encoded"].is_virtual:
                fail(f"{merged}: /encoded is {eb.dtype}, virtual={b['encoded'].is_virtual}")
            off = b["offsets"][()]
            for i in range(len(off) - 1):
                sa = ea[a["offsets"][i]:a["offsets"][i + 1]].tobytes()
                sb = eb[off[i]:off[i + 1]].tobytes()
                if sa != sb:
                    fail(f"{merged}: sample {i}'s encoded bytes differ")
                pa = np.asarray(Image.open(io.BytesIO(sa)))
                pb = np.asarray(Image.open(io.BytesIO(sb)))
                if not np.array_equal(pa, pb):
                    fail(f"{merged}: sample {i} decodes to other pixels")
        for k in a.attrs:
            if k in SKIP_ATTRS or k.startswith("shard_"):
                continue
            va, vb = a.attrs[k], b.attrs.get(k)
            if vb is None or not np.array_equal(np.asarray(va), np.asarray(vb)):
                fail(f"{merged}: attribute {k} = {vb!r}, single run {va!r}")
        for k in ("shard_index", "shard_first", "shard_listed"):
            if k in b.attrs:
                fail(f"{merged}: keeps the part's own attribute {k}")
        if "parts" not in b.attrs or "run_id" not in b.attrs:
            fail(f"{merged}: no parts/run_id attribute")
        n = len(a["label"])
    return n


def check_lmdb(single, merged):
    ra, rb = records(single), records(merged)
    if len(ra) != len(rb):
        fail(f"{merged}: {len(rb)} records, single run {len(ra)}")
    for i, ((ka, va), (kb, vb)) in enumerate(zip(ra, rb)):
        if ka != kb:
            fail(f"{merged}: record {i} has key {kb!r}, single run {ka!r}")
        if va != vb:
            fail(f"{merged}: record {i} ({kb!r}) has another value")
    ja = json.load(open(f"{single}/libdata.json"))
    jb = json.load(open(f"{merged}/libdata.json"))
    for k in set(ja) | set(jb):
        if k in SKIP_ATTRS:
            continue
        if ja.get(k) != jb.get(k):
            fail(f"{merged}/libdata.json: {k} = {jb.get(k)!r}, single run {ja.get(k)!r}")
    return len(ra)


def main():
    for line in open(sys.argv[1]):
        if not line.strip():
            continue
        kind, single, merged = line.split()
        n = check_h5(single, merged) if kind == "h5" else check_lmdb(single, merged)
        print(f"equal: {merged} == {single} ({n} samples)")


if __name__ == "__main__":
    main()
