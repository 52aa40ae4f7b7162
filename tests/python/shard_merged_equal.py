#!/usr/bin/python3
"""A merged dataset equals a single run, sample by sample (h5py / python-lmdb as independent
readers):

  shard_merged_equal.py h5 SINGLE.h5 MERGED.h5
  shard_merged_equal.py lmdb SINGLE.lmdb MERGED.lmdb

HDF5: /label, /filename and /data (raw) or /offsets, /shape and every sample's bytes of
/encoded (encoded) are equal, read through HDF5 (the merged file's virtual datasets). LMDB: the
same records (keys and values) in the same order. Exit 0 when equal, else 1 with what differs.
"""
import sys

import numpy as np


def h5(single, merged):
    import h5py
    with h5py.File(single, "r") as s, h5py.File(merged, "r") as m:
        keys = ["label", "filename"] + (["offsets", "shape", "encoded"] if "encoded" in s
                                        else ["data"])
        for k in keys:
            a, b = s[k][:], m[k][:]
            if a.shape != b.shape or not np.array_equal(a, b):
                print(f"FAIL: /{k} differs: single {a.shape}, merged {b.shape}")
                sys.exit(1)
        n = len(s["label"])
        if "encoded" in s:  # the decoded images too: the same bytes decode the same
            off = m["offsets"][:]
            for i in range(n):
                if m["encoded"][off[i]:off[i + 1]].tobytes() != \
                        s["encoded"][off[i]:off[i + 1]].tobytes():
                    print(f"FAIL: encoded sample {i} differs")
                    sys.exit(1)
        print(f"merged == single: {n} samples ({', '.join(keys)})")


def lmdb_(single, merged):
    from lmdb_records import records


    a, b = records(single), records(merged)
    if a != b:
        diff = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        print(f"FAIL: {len(a)} vs {len(b)} records; first difference at {diff}")
        sys.exit(1)
    print(f"merged LMDB == single: {len(a)} records, keys and values")


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in ("h5", "lmdb"):
        print(__doc__)
        sys.exit(2)
    (h5 if sys.argv[1] == "h5" else lmdb_)(sys.argv[2], sys.argv[3])
