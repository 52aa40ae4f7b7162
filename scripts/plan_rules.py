#!/usr/bin/python3
"""Apply the allocation rules of docs/caffe_memory.md to the measured runs, component by component.

    plan_rules.py [PLAN_DIR [WORKDIR]]      (defaults: tests/data/plan, /tmp/libdata-plan)

A cross-check of the rules, not the estimator: shapes come from what Caffe logged
(PLAN_DIR/shapes/NET.txt, scaled from the logged TRAIN batch to each measured batch), the layer
types and parameters from the nets' prototxts (parsed with Caffe's own caffe_pb2, found under
CAFFE_PB2_DIR or the CMake build /work/caffe-cmake), the process baseline from the baseline rows
of measured.tsv, the LibData reader's ring from its log line in WORKDIR/logs, the LMDB record size
and HDF5 file sizes from the datasets in WORKDIR. Prints, per measured (net, data layer, batch):
each component in MiB, the rule total, the mean measured peak and the error. With --tsv, one
tab-separated line per row for the table in docs/caffe_memory.md.
"""
import glob
import os
import re
import sys
from collections import defaultdict

PB2 = os.environ.get("CAFFE_PB2_DIR", "/work/caffe-cmake/include/caffe/proto")
sys.path.insert(0, PB2)
import caffe_pb2  # noqa: E402
from google.protobuf import text_format  # noqa: E402

F = 4  # bytes per float
SOLVER_X = {"SGD": 1, "Nesterov": 2, "AdaGrad": 2, "RMSProp": 2, "AdaDelta": 4, "Adam": 3}
PREFETCH = 4  # data_param.prefetch default (caffe.proto:694)
MIB = 1 << 20
# the nets as committed (PLAN_DIR may be another output directory of plan_measure.sh)
NETS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "plan", "nets")
# Components allocated but never written. This Caffe build's compiler fused SyncedMemory::to_cpu's
# malloc + memset(0) into calloc (objdump: to_cpu calls calloc@plt), and glibc's calloc of a
# fresh mmap'ed block writes nothing: such a buffer costs address space (malloc failure,
# ulimit -v) but no RSS until written. Listed, not added to the RSS total.
VIRTUAL = "(virtual)"


def read_tsv(path):
    rows, head = [], None
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        f = line.rstrip("\n").split("\t")
        if head is None:
            head = f
        else:
            rows.append(dict(zip(head, f)))
    return rows


def read_shapes(path):
    """-> ({phase: {top: [dims]}}, logged TRAIN batch)"""
    shapes = defaultdict(dict)
    batch = None
    for line in open(path):
        m = re.match(r"# Top shapes .* at TRAIN batch (\d+)", line)
        if m:
            batch = int(m.group(1))
        if line.startswith("#") or line.startswith("phase\t"):
            continue
        ph, layer, top, shape, inplace = line.rstrip("\n").split("\t")
        dims = [] if shape == "(scalar)" else [int(x) for x in shape.split()]
        shapes[ph][top] = dims
    return shapes, batch


def count(dims):
    n = 1
    for d in dims:
        n *= d
    return n


def scaled(dims, b0, b):
    """dims logged at TRAIN batch b0, rescaled to batch b (first axis only)."""
    if not dims:
        return 1
    return count(dims) // dims[0] * (dims[0] * b // b0 if dims[0] == b0 else dims[0])


def net_param(path, batch):
    n = caffe_pb2.NetParameter()
    text_format.Merge(open(path).read().replace("TRAIN_BATCH", str(batch)), n)
    return n


def in_phase(layer, phase):
    if not layer.include:
        return True
    return any(r.phase == (caffe_pb2.TRAIN if phase == "TRAIN" else caffe_pb2.TEST)
               for r in layer.include)


def ksize(p, attr):
    v = getattr(p, attr)
    return v[0] if len(v) else 1


def estimate(net, variant, batch, test_batch, solver, shapes, b0, work, plan_dir, iters, tpasses,
             titer):
    """Components (bytes) for one run."""
    proto = net_param(os.path.join(NETS_DIR, net, f"{variant}_train_val.prototxt"), batch)
    comp = defaultdict(int)
    params = 0
    for phase in ("TRAIN", "TEST"):
        if phase not in shapes:
            continue
        b_ph = batch if phase == "TRAIN" else int(test_batch)
        sh = shapes[phase]

        def cnt(top):
            dims = sh[top]
            if phase == "TRAIN":
                return scaled(dims, b0, batch)
            return count(dims)
        key = "train" if phase == "TRAIN" else "test"
        # tops: distinct blobs (in-place tops are the bottom's blob; split tops share data)
        seen = set()
        consumers = defaultdict(list)
        layers = [lay for lay in proto.layer if in_phase(lay, phase)]
        for lay in layers:
            for b in lay.bottom:
                consumers[b].append(lay)
        for lay in layers:
            for t in lay.top:
                if t in seen or t in lay.bottom:
                    continue
                seen.add(t)
                n = cnt(t) if t in sh else 0
                is_data_top = lay.type in ("Data", "HDF5Data", "LibData")
                # data: Data/LibData lend their batch (set_cpu_data); labels of LibData are copied
                if not is_data_top or lay.type == "HDF5Data" or (lay.type == "LibData" and t != "data"):
                    comp[f"{key} tops data"] += n * F
                if phase != "TRAIN":
                    continue
                # diff: every blob backward runs through; the data blob's because the first
                # Convolution takes bottom diff unconditionally; labels never; losses 1 float
                if t == "label":
                    continue
                if "loss" in lay.type.lower():
                    comp[f"{key} tops diff"] += F
                    continue
                if is_data_top:
                    if any(c.type == "Convolution" for c in consumers[t]) or any(
                            c.type == "Power" and c.top[0] == t and any(
                                d.type == "Convolution" for d in consumers[t] if d is not c)
                            for c in consumers[t]):
                        # allocated (calloc) but never written: not resident, see VIRTUAL
                        comp[f"{key} data diff (virtual)"] += n * F
                    continue
                comp[f"{key} tops diff"] += n * F
        # implicit splits: a blob consumed by k>1 layers in TRAIN gets k split diffs
        if phase == "TRAIN":
            for b, cons in consumers.items():
                if len(cons) > 1 and b != "label" and b in sh:
                    # in-place consumers do not count as separate readers in InsertSplits only
                    # when they are the last one; all nets here: k distinct readers
                    readers = [c for c in cons if not (len(c.top) and c.top[0] == b)]
                    if len(readers) > 1:
                        comp[f"{key} split diffs"] += len(readers) * cnt(b) * F
        # layer buffers and params
        for lay in layers:
            t = lay.type
            bot = lay.bottom[0] if lay.bottom else None
            bcnt = cnt(bot) if bot in sh else 0
            if t == "Convolution":
                p = lay.convolution_param
                k = ksize(p, "kernel_size")
                s = ksize(p, "stride")
                pad = p.pad[0] if len(p.pad) else 0
                cin = sh[bot][1]
                out = sh[lay.top[0]]
                if phase == "TRAIN":
                    params += p.num_output * (cin // max(p.group, 1)) * k * k + (
                        p.num_output if p.bias_term else 0)
                if not (k == 1 and s == 1 and pad == 0):
                    comp[f"{key} im2col"] += cin * k * k * out[2] * out[3] * F
            elif t == "InnerProduct":
                p = lay.inner_product_param
                inner = count(sh[bot][1:])
                if phase == "TRAIN":
                    params += p.num_output * inner + (p.num_output if p.bias_term else 0)
            elif t == "Pooling" and lay.pooling_param.pool == caffe_pb2.PoolingParameter.MAX:
                comp[f"{key} layer buffers"] += cnt(lay.top[0]) * 4
            elif t == "LRN":
                comp[f"{key} layer buffers"] += bcnt * F
            elif t == "Dropout" and phase == "TRAIN":
                comp[f"{key} layer buffers"] += bcnt * 4
            elif t == "BatchNorm":
                c = sh[bot][1]
                if phase == "TRAIN":
                    params += 2 * c + 1
                n_buf = 2 + (1 if (phase == "TRAIN" and lay.top[0] == bot) else 0)
                comp[f"{key} layer buffers"] += n_buf * bcnt * F
            elif t == "Scale":
                c = sh[bot][1]
                if phase == "TRAIN":
                    params += c * (2 if lay.scale_param.bias_term else 1)
                if lay.top[0] == bot:
                    comp[f"{key} layer buffers"] += bcnt * F
            elif t == "SoftmaxWithLoss":
                comp[f"{key} layer buffers"] += bcnt * F
        # data layer
        dl = layers[0]
        if dl.type == "Data":
            dshape = sh["data"]
            per = count(dshape) // dshape[0]
            comp[f"{key} data layer"] += PREFETCH * b_ph * (per + 1) * F
            db = os.path.join(work, dl.data_param.source)
            entries = len_lmdb(db)
            rec = os.path.getsize(os.path.join(db, "data.mdb")) / max(entries, 1)
            if phase == "TRAIN":
                read = (iters + PREFETCH + 1) * batch
            else:
                read = tpasses * titer * b_ph + (PREFETCH + 1) * b_ph
            comp[f"{key} LMDB pages"] += int(min(read, entries) * rec)
        elif dl.type == "HDF5Data":
            files = [l.strip() for l in open(os.path.join(work, dl.hdf5_data_param.source)) if l.strip()]
            import h5py
            biggest = 0
            for f in files:
                with h5py.File(os.path.join(work, f), "r") as h:
                    biggest = max(biggest, sum(h[k].size for k in ("data", "label")))
            comp[f"{key} HDF5 file"] += biggest * F
        elif dl.type == "LibData":
            comp[f"{key} data layer"] += libdata_ring(work, net, batch, phase)
    comp["params (data+diff)"] = 2 * params * F
    comp[f"solver ({solver} x{SOLVER_X[solver]})"] = SOLVER_X[solver] * params * F
    return comp, params


_lmdb_cache = {}


def len_lmdb(path):
    if path not in _lmdb_cache:
        import lmdb
        env = lmdb.open(path, readonly=True, lock=False)
        _lmdb_cache[path] = env.stat()["entries"]
        env.close()
    return _lmdb_cache[path]


def libdata_ring(work, net, batch, phase):
    logs = sorted(glob.glob(os.path.join(work, "logs", f"{net}_libdata_b{batch}_r1.log")))
    if not logs:
        return 0
    want = "TRAIN" if phase == "TRAIN" else "TEST"
    for line in open(logs[0], errors="replace"):
        m = re.search(r"LibData layer '\S+' \((TRAIN|TEST),.*reader memory (\d+) bytes", line)
        if m and m.group(1) == want:
            return int(m.group(2))
    return 0


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    tsv = "--tsv" in sys.argv
    plan_dir = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                                 "tests", "data", "plan")
    work = args[1] if len(args) > 1 else "/tmp/libdata-plan"
    rows = read_tsv(os.path.join(plan_dir, "measured.tsv"))
    base = defaultdict(list)
    runs = defaultdict(list)
    meta = {}
    for r in rows:
        if r["status"] != "0":
            continue
        if r["net"] == "baseline":
            base[r["data_layer"]].append(int(r["peak_rss_kib"]))
            continue
        k = (r["net"], r["data_layer"], int(r["batch"]), r["variant"])
        runs[k].append(int(r["peak_rss_kib"]))
        meta[k] = r
    if tsv:
        print("# docs/caffe_memory.md's allocation rules applied to every measured.tsv row by")
        print("# scripts/plan_rules.py (shapes as Caffe logged them, tests/data/plan/shapes/). A check of")
        print("# the rules, not dataconv plan's output. rule_mib: sum of the resident components;")
        print("# measured_mib: mean peak RSS of the runs; error_pct = (rule - measured) / measured;")
        print("# components in MiB, '(virtual)' ones allocated but never written (not in rule_mib).")
        print("net\tdata_layer\tbatch\tvariant\tparams\trule_mib\tmeasured_mib\terror_pct\tcomponents")
    for k in sorted(runs, key=lambda k: (k[0], k[1], k[3], k[2])):
        net, v, b, var = k
        r = meta[k]
        shapes_file = os.path.join(plan_dir, "shapes", f"{net}.txt")
        if not os.path.exists(shapes_file):
            continue
        shapes, b0 = read_shapes(shapes_file)
        if var.startswith("prefetch"):
            continue  # rule below assumes the default prefetch
        comp, params = estimate(net, v, b, r["test_batch"], r["solver"], shapes, b0, work, plan_dir,
                                int(r["iterations"]), int(r["test_passes"]),
                                2 if net in ("lenet", "resnet") else 1)
        bl = base["none+layer" if v == "libdata" else "none"]
        comp["baseline (measured)"] = int(sum(bl) / len(bl) * 1024)
        total = sum(c for n, c in comp.items() if not n.endswith(VIRTUAL))
        meas = sum(runs[k]) / len(runs[k]) * 1024
        err = (total - meas) / meas * 100
        parts = ", ".join(f"{n} {c / MIB:.1f}" for n, c in sorted(comp.items()) if c)
        if tsv:
            print(f"{net}\t{v}\t{b}\t{var}\t{params}\t{total / MIB:.1f}\t{meas / MIB:.1f}\t{err:+.1f}\t{parts}")
        else:
            print(f"{net} {v} b{b} {var}: rule {total / MIB:.1f} MiB, measured {meas / MIB:.1f} MiB, "
                  f"error {err:+.1f}%  [{parts}]")


if __name__ == "__main__":
    main()
