#!/usr/bin/python3
"""Top shapes of every layer, as Caffe logged them while setting up its nets.

    plan_shapes.py CAFFE_LOG NET BATCH > tests/data/plan/shapes/NET.txt

CAFFE_LOG is the GLOG_logtostderr output of `caffe train` (scripts/plan_measure.sh). Caffe's
net.cpp logs, per layer, "L -> TOP" (AppendTop: one line per top, "(in-place)" when the top is a
bottom), then "Setting up L", then one "Top shape: N C H W (count)" per top, then "Memory
required for data: BYTES" (its running sum of top data bytes). The TRAIN net comes first
("Creating training net"), then the TEST net ("Creating test net (#0)").

Output: comment lines, then one line per top blob:
    PHASE<TAB>LAYER<TAB>TOP<TAB>SHAPE (space-separated dims)<TAB>in-place (1/0)
and per phase a "# PHASE memory required for data: BYTES" line (Caffe's own count).
Split layers Caffe inserted (a blob feeding several layers) appear under their generated names.
"""
import re
import sys


def main():
    log, net, batch = sys.argv[1], sys.argv[2], sys.argv[3]
    phase = None
    tops = {}        # layer -> [(top, inplace)] in AppendTop order
    rows, mem = [], {}
    cur, k = None, 0
    for line in open(log, errors="replace"):
        if "Creating training net" in line:
            phase = "TRAIN"
            tops = {}
        elif "Creating test net" in line:
            phase = "TEST"
            tops = {}
        if phase is None:
            continue
        m = re.search(r"\] (\S+) -> (\S+)( \(in-place\))?\s*$", line)
        if m:
            tops.setdefault(m.group(1), []).append((m.group(2), bool(m.group(3))))
            continue
        m = re.search(r"\] Setting up (\S+)\s*$", line)
        if m:
            cur, k = m.group(1), 0
            continue
        m = re.search(r"\] Top shape: ([0-9 ]*?)\s*\((\d+)\)", line)
        if m and cur is not None:
            top, inplace = tops.get(cur, [])[k] if k < len(tops.get(cur, [])) else ("?", False)
            shape = m.group(1).strip() or "(scalar)"
            rows.append((phase, cur, top, shape, int(inplace)))
            k += 1
            continue
        m = re.search(r"\] Memory required for data: (\d+)", line)
        if m:
            mem[phase] = m.group(1)
            continue
        if "Network initialization done" in line and phase == "TEST":
            break
    print(f"# Top shapes of tests/data/plan/nets/{net}/data_train_val.prototxt at TRAIN batch {batch},")
    print("# as real Caffe logged them (scripts/plan_measure.sh -> scripts/plan_shapes.py).")
    print("# Columns: phase, layer, top blob, shape (N C H W; (scalar) for a loss), in-place (1: top is")
    print("# also a bottom, no new blob). Caffe's 'Memory required for data' = sum of top data bytes,")
    print("# each blob counted once per top, in-place tops included (net.cpp).")
    for ph, v in mem.items():
        print(f"# {ph} memory required for data: {v}")
    print("phase\tlayer\ttop\tshape\tin_place")
    for r in rows:
        print("\t".join(str(x) for x in r))


if __name__ == "__main__":
    main()
