"""Test helper (not a test): sharded parts and a merged virtual-dataset file as issue 13's
on-disk contract describes them (libdata/src/store/h5_format.h), made with dataconv for the
parts and h5py's VirtualLayout for the merge: an independent writer for the reader's tests.

    python3 vds_build.py parts LIST ROOT STEM N [dataconv options...]   -> STEM-0000K-of-0000N.h5
    python3 vds_build.py merge OUT.h5 PART...
    python3 vds_build.py float32 PART...       (rewrite parts' /data as float32, in place)

As a module: make_parts(), merge(), to_float32().
"""
import hashlib
import os
import subprocess
import sys

import h5py
import numpy as np

SHARD_ATTRS = ("shard_index", "shard_first", "shard_listed")


def part_name(stem, k, n):
    return f"{stem}-{k:05d}-of-{n:05d}.h5"


def make_parts(dataconv, listfile, root, stem, n, options=(), run_tag=""):
    """Convert the K-th contiguous range [floor(K*L/N), floor((K+1)*L/N)) of LISTFILE's lines
    into STEM-0000K-of-0000N.h5 for every K (dataconv --list), then set the shard attributes.
    run_id hashes the options, N, the listing and run_tag (a different tag = another run).
    Returns the part paths."""
    lines = [ln for ln in open(listfile).read().splitlines() if ln.strip()]
    total = len(lines)
    rid = hashlib.sha1(repr((list(options), n, lines, run_tag)).encode()).hexdigest()[:16]
    parts = [part_name(stem, k, n) for k in range(n)]
    ranges = [(k * total // n, (k + 1) * total // n) for k in range(n)]
    for k, (lo, hi) in enumerate(ranges):
        if hi > lo:
            sub = f"{stem}-{k:05d}.list"
            with open(sub, "w") as f:
                f.write("".join(ln + "\n" for ln in lines[lo:hi]))
            subprocess.run([dataconv, "--list", sub, "--root", root, parts[k], "-q", *options],
                           check=True)
            os.remove(sub)
    model = next(parts[k] for k, (lo, hi) in enumerate(ranges) if hi > lo)
    # class names from the whole listing, as a sharded run records them (dataconv --list names
    # the classes by label number, 0 .. the largest label: here of the part's own lines)
    classes = [str(c) for c in range(max(int(ln.rsplit(" ", 1)[1]) for ln in lines) + 1)]
    for k, (lo, hi) in enumerate(ranges):
        if hi == lo:  # an empty part: the layout of a non-empty one, no rows (h5py)
            with h5py.File(model, "r") as p0, h5py.File(parts[k], "w") as f:
                for name, ds in p0.items():
                    if name == "offsets":
                        f[name] = np.zeros(1, np.uint64)
                        continue
                    f.create_dataset(name, shape=(0,) + ds.shape[1:], dtype=ds.dtype,
                                     maxshape=(None,) + ds.shape[1:], chunks=ds.chunks)
                for key, val in p0.attrs.items():
                    f.attrs[key] = val
        with h5py.File(parts[k], "a") as f:
            f.attrs.create("class_names", classes, dtype=h5py.string_dtype())
            f.attrs["num_classes"] = np.int32(len(classes))
            f.attrs["shard_index"] = np.int32(k)
            f.attrs["shard_count"] = np.int32(n)
            f.attrs["shard_first"] = np.int64(lo)
            f.attrs["shard_listed"] = np.int64(hi - lo)
            f.attrs["listing_total"] = np.int64(total)
            f.attrs["run_id"] = rid
    return parts


def to_float32(parts):
    """Rewrite each part's /data as float32 (pixel / 255), chunked like before, no filter."""
    for p in parts:
        with h5py.File(p, "a") as f:
            d = f["data"][:]
            chunks = f["data"].chunks
            del f["data"]
            f.create_dataset("data", data=d.astype(np.float32) / 255, chunks=chunks,
                             maxshape=(None,) + d.shape[1:])


def merge(out, parts):
    """Write OUT as the contract's merged file over PARTS (in order): virtual /data or
    /encoded, /label, /filename, /shape with relative source paths; a real /offsets."""
    odir = os.path.dirname(os.path.abspath(out))

    def rel(p):
        a = os.path.abspath(p)
        return os.path.relpath(a, odir) if a.startswith(odir + os.sep) else a

    infos = []
    for p in parts:
        with h5py.File(p, "r") as f:
            infos.append({name: (ds.shape, ds.dtype) for name, ds in f.items()})
            if "offsets" in f:
                infos[-1]["_offsets"] = f["offsets"][:]
    with h5py.File(parts[0], "r") as p0:
        attrs = dict(p0.attrs)
    with h5py.File(out, "w", libver="latest") as f:
        for name in infos[0]:
            if name.startswith("_") or name == "offsets":
                continue
            shape0, dtype = infos[0][name]
            total = sum(i[name][0][0] for i in infos)
            lay = h5py.VirtualLayout(shape=(total,) + shape0[1:], dtype=dtype)
            at = 0
            for p, i in zip(parts, infos):
                shape = i[name][0]
                if shape[0] == 0:
                    continue  # empty parts have no mapping (they stay in `parts`)
                lay[at:at + shape[0]] = h5py.VirtualSource(rel(p), name, shape=shape)
                at += shape[0]
            f.create_virtual_dataset(name, lay, fillvalue=None)
        if "_offsets" in infos[0]:
            offs, base = [np.zeros(1, np.uint64)], 0
            for i in infos:
                offs.append(i["_offsets"][1:] + np.uint64(base))
                base += int(i["_offsets"][-1])
            f["offsets"] = np.concatenate(offs).astype(np.uint64)
        for key, val in attrs.items():
            if key not in SHARD_ATTRS:
                f.attrs[key] = val
        f.attrs.create("parts", [rel(p) for p in parts], dtype=h5py.string_dtype())


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "parts":
        listfile, root, stem, n = sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
        dc = os.environ["DATACONV"]
        print("\n".join(make_parts(dc, listfile, root, stem, n, sys.argv[6:])))
    elif cmd == "merge":
        merge(sys.argv[2], sys.argv[3:])
    elif cmd == "float32":
        to_float32(sys.argv[2:])
    else:
        sys.exit(f"vds_build.py: unknown command {cmd}")
