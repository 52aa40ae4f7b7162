#!/usr/bin/env bash
# Measure real Caffe's peak host memory for `dataconv plan` (issue 17): regenerates the datasets,
# runs `caffe train` on the four nets of tests/data/plan/nets (scripts/plan_nets.py) with each
# data layer at several TRAIN batch sizes under /usr/bin/time -v, and writes
#   tests/data/plan/measured.tsv    one row per run: peak RSS (KiB) and what was run
#   tests/data/plan/datasets.tsv    the datasets: file, format, shape, bytes
#   tests/data/plan/shapes/NET.txt  every top shape Caffe logged (TRAIN and TEST net)
#
# Usage: CAFFE_ROOT=/path/to/caffe scripts/plan_measure.sh [WORKDIR]
#   CAFFE_ROOT  a Caffe build as for samples/caffe/run_all.sh (Makefile tree or CMake build/install)
#   WORKDIR     where photos, datasets and logs go (default /tmp/libdata-plan); kept between runs,
#               the datasets are rebuilt only when missing. Never inside the checkout (not in git).
# Optional environment:
#   DATACONV, LIBDATA_CAFFE_LAYER   default: the newest build*/ of this checkout (configure
#                                   libdata with -DLIBDATA_BUILD_CAFFE=ON -DCAFFE_ROOT=...)
#   NETS="lenet caffenet vgg resnet"  which nets (empty: none, e.g. for EXTRAS only)
#   VARIANTS="data hdf5 libdata hdf5big"  which data layers (hdf5big: caffenet only)
#   RUNS=2                          runs per (net, variant, batch); every run is a row
#   BATCHES="32"                    TRAIN batch sizes for every net in NETS instead of each net's
#                                   own list (lenet 16 64 256, caffenet 4 8 16, vgg 4 8 16,
#                                   resnet 16 64 128)
#   OUT=tests/data/plan             where the table, dataset list and shapes are written
#   APPEND=1                        append to measured.tsv instead of starting it anew
#   BASELINE=0                      skip the two baseline rows (e.g. with APPEND=1)
#   EXTRAS="solver prefetch lmdb vm"  also these one-component-at-a-time runs (default: none):
#                                   solver: caffenet+Data at batch 8 with each solver type;
#                                   prefetch: caffenet at batch 8 with data_param.prefetch 1;
#                                   lmdb: a data-layer-only net (Data/HDF5Data/LibData + Silence,
#                                   caffenet's data layers) for 3 and for 40 iterations (2 epochs)
#                                   at batch 16: what reading the whole dataset adds (LMDB map);
#                                   vm: each net x data layer at its middle batch, once, sampling
#                                   /proc/PID/status every 50 ms: VmPeak (address space, what
#                                   ulimit -v caps) next to VmHWM (peak RSS) -> OUT/measured_vm.tsv
# At the end scripts/plan_rules.py writes OUT/rules_vs_measured.tsv (the rules of
# docs/caffe_memory.md applied to every measured row; needs Caffe's caffe_pb2.py: CAFFE_PB2_DIR).
# Needs /usr/bin/python3 with numpy, PIL, h5py, lmdb, protobuf (scripts/deps.sh test) and GNU time.
# A full run takes about 20 minutes on 2 cores and ~2.5 GB of RAM at its peak (hdf5big).
# The committed table was made in five invocations: NETS=lenet (baseline + lenet), lenet again
# with APPEND=1 BASELINE=0 (so lenet has 4 runs), NETS="caffenet vgg resnet" APPEND=1 BASELINE=0
# EXTRAS="solver prefetch", then NETS= APPEND=1 BASELINE=0 EXTRAS=lmdb, and the same with
# EXTRAS=vm; then NETS="caffenet vgg" BATCHES=32 APPEND=1 BASELINE=0 (a fourth, larger batch).
# Every run: OPENBLAS_NUM_THREADS=1 (OpenBLAS's per-thread buffers are part of the baseline; a
# fixed count makes runs comparable), GLOG_logtostderr=1. Only the LibData runs (and the
# "baseline+layer" row) LD_PRELOAD libdata's layer; the stock layers run plain Caffe.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/.." && pwd)
: "${CAFFE_ROOT:?set CAFFE_ROOT to a Caffe build: its source tree (Makefile) or build/install directory (CMake)}"
WORK=${1:-/tmp/libdata-plan}
OUT=${OUT:-$SRC/tests/data/plan}
NETS=${NETS-lenet caffenet vgg resnet}
VARIANTS=${VARIANTS:-data hdf5 libdata hdf5big}
RUNS=${RUNS:-2}
PY=/usr/bin/python3
mkdir -p "$WORK" "$OUT/shapes"
WORK=$(cd "$WORK" && pwd)
OUT=$(cd "$OUT" && pwd)
case "$WORK/" in "$SRC"/*) echo "WORKDIR must be outside the checkout ($SRC)" >&2; exit 1 ;; esac

find_built() { ls -t "$SRC"/build*/"$1" 2>/dev/null | head -n 1; }
. "$SRC/samples/caffe/caffe_tools.sh"
CAFFE=$(caffe_tool caffe) || { echo "no caffe tool under $CAFFE_ROOT: build Caffe first" >&2; exit 1; }
DATACONV=${DATACONV:-$(find_built dataconv)}
LAYER=${LIBDATA_CAFFE_LAYER:-$(find_built bindings/caffe/libdata_caffe_layer.so)}
for f in "$DATACONV" "$LAYER"; do
    [ -n "$f" ] && [ -e "$f" ] || {
        echo "missing dataconv or libdata_caffe_layer.so: build libdata with" \
             "-DLIBDATA_BUILD_CAFFE=ON -DCAFFE_ROOT=$CAFFE_ROOT" >&2
        exit 1
    }
done
PRELOAD=$(caffe_preload "$LAYER")
[ -x /usr/bin/time ] || { echo "needs GNU time at /usr/bin/time (apt-get install time)" >&2; exit 1; }

# What Caffe is this: the git commit of the tree if there is one, the library's soname version.
caffe_build() {
    local commit="" lib kind=cmake
    commit=$(git -C "$CAFFE_ROOT" rev-parse --short HEAD 2>/dev/null || true)
    lib=$(ldd "$CAFFE" | awk '/libcaffe/ { print $3 }')
    [ -e "$CAFFE_ROOT/Makefile.config" ] && kind="make"
    local blas
    blas=$(ldd "$lib" 2>/dev/null | awk '/libopenblas|libmkl|libatlas|libcblas/ { print $1; exit }')
    echo "BVLC-caffe-$(basename "$(readlink -f "$lib")" | sed 's/^libcaffe.so.//')${commit:+-$commit}-$kind-cpu-${blas%%.so*}"
}
BUILD=$(caffe_build)
echo "caffe:   $CAFFE ($BUILD)"
echo "layer:   $LAYER"
echo "work in: $WORK"

# ---- datasets -------------------------------------------------------------------------------
# 400 real-photo JPEGs (bench/suite_photos.py: skimage + Debian wallpapers, fixed seed), 4
# classes; every 5th is validation (80), the rest training (320). big = training list x6 (1920).
cd "$WORK"
"$PY" "$SRC/bench/suite_photos.py" photos 400 --classes 4 >/dev/null
if [ ! -e lists.done ]; then
    (cd photos && find . -name '*.jpg' | sed 's|^\./||' | sort) |
        awk '{ split($1, p, "/"); l = substr(p[1], 6); print $1, l > ((NR % 5 == 0) ? "val.txt" : "train.txt") }'
    for _ in 1 2 3 4 5 6; do cat train.txt; done >big.txt
    touch lists.done
fi
dc() { # dc LIST OUT ARGS...: dataconv unless OUT (with --split: its list OUT-stem.txt) exists
    local list=$1 out=$2
    shift 2
    [ -e "$out" ] || [ -e "${out%.h5}.txt" ] && return 0
    echo "dataconv photos/ $list $out $*"
    "$DATACONV" -q photos/ "$list" "$out" "$@"
}
for set in train val; do
    for size in 32 256; do
        dc $set.txt "${set}_$size.lmdb" --resize "$size"   # Data layer
        dc $set.txt "${set}_$size.h5" --resize "$size"     # LibData layer
    done
    # HDF5Data has no crop: its files hold the images at the crop size, split as docs/caffe.md says
    dc $set.txt "${set}_28_split.h5" --resize 28 --split 256K
    dc $set.txt "${set}_227_split.h5" --resize 227 --split 16M
done
dc big.txt big_227.h5 --resize 227                          # one large file (HDF5Data, hdf5big)
[ -e big_227.txt ] || echo "$WORK/big_227.h5" >big_227.txt

{
    echo "# Datasets of scripts/plan_measure.sh (made in WORKDIR from bench/suite_photos.py photos)."
    echo "# file: as named in the nets' sources; format; images; shape of data (N C H W, uint8);"
    echo "# bytes: on disk (LMDB: data.mdb; split: all parts); pixel_bytes: N*C*H*W"
    printf "file\tformat\timages\tshape\tbytes\tpixel_bytes\n"
    for f in {train,val}_{32,256}.lmdb {train,val}_{32,256}.h5 {train,val}_{28,227}_split.txt big_227.h5; do
        "$PY" - "$f" <<'PY'
import glob, os, sys
f = sys.argv[1]
if f.endswith(".lmdb"):
    import lmdb, numpy as np
    sys.path.insert(0, "/usr/lib/python3/dist-packages")
    env = lmdb.open(f, readonly=True, lock=False)
    with env.begin() as t:
        n = t.stat()["entries"]
        k, v = next(iter(t.cursor()))
    # Caffe Datum: read channels/height/width with the generic protobuf wire format
    def varint(b, i):
        r = s = 0
        while True:
            c = b[i]; i += 1; r |= (c & 0x7f) << s; s += 7
            if c < 0x80: return r, i
    i, dims = 0, {}
    while i < len(v):
        key, i = varint(v, i)
        field, wt = key >> 3, key & 7
        if wt == 0:
            val, i = varint(v, i); dims[field] = val
        elif wt == 2:
            ln, i = varint(v, i); i += ln
        else:
            break
    c, h, w = dims.get(1), dims.get(2), dims.get(3)
    size = os.path.getsize(os.path.join(f, "data.mdb"))
    print(f"{f}\tlmdb\t{n}\t{n} {c} {h} {w}\t{size}\t{n*c*h*w}")
else:
    import h5py
    files = [f] if f.endswith(".h5") else [l.strip() for l in open(f) if l.strip()]
    n = 0; size = 0
    for p in files:
        with h5py.File(p, "r") as h:
            s = h["data"].shape; n += s[0]
        size += os.path.getsize(p)
    fmt = "hdf5" if f.endswith(".h5") else f"hdf5-split({len(files)})"
    print(f"{f}\t{fmt}\t{n}\t{n} {s[1]} {s[2]} {s[3]}\t{size}\t{n*s[1]*s[2]*s[3]}")
PY
    done
} >"$OUT/datasets.tsv"

# ---- runs -----------------------------------------------------------------------------------
TSV=$OUT/measured.tsv
if [ "${APPEND:-0}" != 1 ] || [ ! -e "$TSV" ]; then
    cat >"$TSV" <<'HEAD'
# Peak host memory of real Caffe (`caffe train`), measured by scripts/plan_measure.sh (issue 17).
# Columns:
#   net          tests/data/plan/nets/NET (baseline: DummyData + 1-output InnerProduct; extras below)
#   data_layer   data (Data, LMDB), hdf5 (HDF5Data, --split files), hdf5big (HDF5Data, one large
#                file), libdata (LibData, LD_PRELOAD), none (baseline), none+layer (baseline with
#                the LibData layer preloaded)
#   phase        train (TRAIN net only) or train+test (solver has test_iter/test_interval: the TEST
#                net exists and ran at least once before the process ended)
#   batch        TRAIN batch_size;  test_batch: TEST batch_size (- without test net)
#   iterations   max_iter (training iterations run);  test_passes: test passes run (test_iter each)
#   solver       solver type;  variant: what differs from the committed net (- = nothing)
#   peak_rss_kib "Maximum resident set size (kbytes)" of /usr/bin/time -v for the whole process
#   run          1, 2, ...: each run of the same command is its own row (lenet: 4, from two
#                invocations of the script a few minutes apart)
#   elapsed_s    wall time;  status: caffe's exit status (0 = ok)
#   date         UTC date of the run;  caffe: Caffe build (version-commit-buildsystem-cpu-BLAS)
# All runs: OPENBLAS_NUM_THREADS=1, GLOG_logtostderr=1, datasets in tests/data/plan/datasets.tsv.
HEAD
    printf "net\tdata_layer\tphase\tbatch\ttest_batch\titerations\ttest_passes\tsolver\tvariant\tpeak_rss_kib\trun\telapsed_s\tstatus\tdate\tcaffe\n" >>"$TSV"
fi
mkdir -p runs logs

run_caffe() { # run_caffe LOG PRELOAD SOLVER: prints "peak_kib elapsed status"
    local log=$1 pre=$2 solver=$3 st=0
    env ${pre:+LD_PRELOAD=$pre} OPENBLAS_NUM_THREADS=1 GLOG_logtostderr=1 \
        /usr/bin/time -v "$CAFFE" train --solver="$solver" >"$log" 2>&1 || st=$?
    local kib el
    kib=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$log")
    el=$(awk -F': ' '/Elapsed \(wall clock\)/ { print $2 }' "$log" |
         awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.1f", s }')
    echo "${kib:-0} ${el:-0} $st"
}

# row NET LAYER PHASE BATCH TBATCH ITERS TPASSES SOLVER VARIANT PRELOAD SOLVERFILE LOGSTEM
row() {
    local r res
    for r in $(seq "$RUNS"); do
        res=$(run_caffe "logs/${12}_r$r.log" "${10}" "${11}")
        read -r kib el st <<<"$res"
        printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n" \
            "$1" "$2" "$3" "$4" "$5" "$6" "$7" "$8" "$9" "$kib" "$r" "$el" "$st" \
            "$(date -u +%F)" "$BUILD" >>"$TSV"
        echo "$1 $2 b$4 ${9} run $r: $kib KiB, ${el}s, status $st"
        [ "$st" = 0 ] || tail -n 5 "logs/${12}_r$r.log"
    done
}

# Baseline: the smallest net a solver accepts.
cat >runs/baseline_train_val.prototxt <<'NET'
name: "baseline"
layer { name: "data" type: "DummyData" top: "data" top: "label"
  dummy_data_param { shape { dim: 1 dim: 1 } shape { dim: 1 dim: 1 } } }
layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip" inner_product_param { num_output: 1 } }
layer { name: "loss" type: "EuclideanLoss" bottom: "ip" bottom: "label" top: "loss" }
NET
cat >runs/baseline_solver.prototxt <<'SOLVER'
net: "runs/baseline_train_val.prototxt"
type: "SGD" base_lr: 0.01 lr_policy: "fixed" max_iter: 2 display: 1
snapshot_after_train: false solver_mode: CPU
SOLVER
if [ "${BASELINE:-1}" = 1 ]; then
    row baseline none train 1 - 2 0 SGD - "" runs/baseline_solver.prototxt baseline
    row baseline none+layer train 1 - 2 0 SGD - "$PRELOAD" runs/baseline_solver.prototxt baseline_layer
fi

batches() {
    case $1 in
        lenet) echo "16 64 256" ;;
        caffenet) echo "4 8 16" ;;
        vgg) echo "4 8 16" ;;
        resnet) echo "16 64 128" ;;
    esac
}
# solver_value FILE KEY: the value of KEY in a solver prototxt (first match)
solver_value() { { grep -o "$2: [^ ]*" "$1" || true; } | head -n 1 | sed 's/^[^:]*: //; s/"//g'; }

prep_net() { # prep_net NET VARIANT BATCH [SOLVER_SED PROTO_SED TAG]: write runs/STEM*.prototxt
    local net=$1 v=$2 b=$3 ssed=${4:-} psed=${5:-} tag=${6:--}
    local dir=$SRC/tests/data/plan/nets/$net
    stem="${net}_${v}_b${b}"
    [ "$tag" = - ] || stem="${stem}_$tag"
    sed "s/TRAIN_BATCH/$b/${psed:+; $psed}" "$dir/${v}_train_val.prototxt" >"runs/$stem.prototxt"
    sed "s|^net: .*|net: \"runs/$stem.prototxt\"|${ssed:+; $ssed}" "$dir/${v}_solver.prototxt" \
        >"runs/${stem}_solver.prototxt"
}

one_net() { # one_net NET VARIANT BATCH [SOLVER_SED PROTO_SED TAG]: RUNS rows
    local net=$1 v=$2 b=$3 tag=${6:--} stem
    prep_net "$@"
    local s=runs/${stem}_solver.prototxt
    local iters tint tb=- phase=train tpasses=0 type
    iters=$(solver_value "$s" max_iter)
    type=$(solver_value "$s" type)
    tint=$(solver_value "$s" test_interval)
    if [ -n "$tint" ]; then
        phase=train+test
        tb=$(awk '/phase: TEST/ { t = 1 } t && /batch_size/ { sub(/.*batch_size: /, ""); print $1; exit }' \
             "runs/$stem.prototxt")
        tpasses=$((iters / tint + 1)) # test_initialization (default true) + every test_interval
    fi
    local pre=""
    [ "$v" = libdata ] && pre=$PRELOAD
    row "$net" "$v" "$phase" "$b" "$tb" "$iters" "$tpasses" "$type" "$tag" "$pre" "$s" "$stem"
}

for net in $NETS; do
    for v in $VARIANTS; do
        [ -e "$SRC/tests/data/plan/nets/$net/${v}_train_val.prototxt" ] || continue
        for b in ${BATCHES:-$(batches "$net")}; do
            one_net "$net" "$v" "$b"
        done
    done
    # Top shapes as Caffe logs them, from the first run of the Data variant at the smallest batch.
    b=$(batches "$net" | awk '{ print $1 }')
    log=logs/${net}_data_b${b}_r1.log
    if [ -e "$log" ]; then
        "$PY" "$HERE/plan_shapes.py" "$log" "$net" "$b" >"$OUT/shapes/$net.txt"
    fi
done

case " ${EXTRAS:-} " in *" solver "*)
    # The solver's history: same net, each solver type (caffenet + Data, batch 8).
    for t in SGD Adam AdaDelta AdaGrad RMSProp; do
        extra=""
        case $t in
            Adam) extra=' momentum2: 0.999' ;;
            AdaDelta) extra=' delta: 1e-6' ;;
        esac
        case $t in
            AdaGrad|RMSProp) ssed="s/^type: .*/type: \"$t\"/; s/momentum: 0.9//" ;;
            *) ssed="s/^type: .*/type: \"$t\"$extra/" ;;
        esac
        [ "$t" = AdaDelta ] && ssed="$ssed; s/base_lr: 0.001/base_lr: 1.0/"
        one_net caffenet data 8 "$ssed" "" "solver=$t"
    done ;;
esac
case " ${EXTRAS:-} " in *" prefetch "*)
    # The prefetch queue: data_param.prefetch 1 instead of the default (Data 4, LibData 2).
    one_net caffenet data 8 "" 's/backend: LMDB/backend: LMDB prefetch: 1/' prefetch=1
    one_net caffenet libdata 8 "" 's/batch_size: 8/batch_size: 8 prefetch: 1/' prefetch=1 ;;
esac
case " ${EXTRAS:-} " in *" lmdb "*)
    # What reading the dataset costs by itself: caffenet's TRAIN data layer + Silence, batch 16,
    # 3 iterations (7 batches read with the prefetch) and 40 iterations (2 epochs of 320 images).
    for v in data hdf5 libdata; do
        for it in 3 40; do
            stem=dataonly_${v}_b16_it$it
            { awk '/phase: TRAIN/ { p = 1 } p { print } p && /\} \}$/ { exit }' \
                  "$SRC/tests/data/plan/nets/caffenet/${v}_train_val.prototxt" | sed 's/TRAIN_BATCH/16/'
              echo 'layer { name: "sink" type: "Silence" bottom: "data" bottom: "label" }'; } \
                >"runs/$stem.prototxt"
            printf 'net: "runs/%s.prototxt"\ntype: "SGD" base_lr: 0.01 lr_policy: "fixed" max_iter: %s\ndisplay: 0 snapshot_after_train: false solver_mode: CPU\n' \
                "$stem" "$it" >"runs/${stem}_solver.prototxt"
            pre=""
            [ "$v" = libdata ] && pre=$PRELOAD
            row dataonly "$v" train 16 - "$it" 0 SGD "iters=$it" "$pre" "runs/${stem}_solver.prototxt" "$stem"
        done
    done ;;
esac
case " ${EXTRAS:-} " in *" vm "*)
    VM=$OUT/measured_vm.tsv
    {
        echo "# Peak address space vs peak RSS of the same runs as measured.tsv (EXTRAS=vm of"
        echo "# scripts/plan_measure.sh): caffe train sampled every 50 ms from /proc/PID/status."
        echo "# vm_peak_kib: VmPeak (virtual; what ulimit -v / RLIMIT_AS limits and what makes"
        echo "# malloc fail); vm_hwm_kib: VmHWM (peak RSS, = time -v's maximum resident set size)."
        printf "net\tdata_layer\tbatch\tvm_peak_kib\tvm_hwm_kib\tstatus\tdate\tcaffe\n"
    } >"$VM"
    for net in lenet caffenet vgg resnet; do
        b=$(batches "$net" | awk '{ print $2 }')
        for v in data hdf5 libdata; do
            prep_net "$net" "$v" "$b"
            s=runs/${stem}_solver.prototxt
            pre=""
            [ "$v" = libdata ] && pre=$PRELOAD
            env ${pre:+LD_PRELOAD=$pre} OPENBLAS_NUM_THREADS=1 GLOG_logtostderr=1 \
                "$CAFFE" train --solver="$s" >"logs/vm_${net}_${v}_b$b.log" 2>&1 &
            pid=$!
            peak=0 hwm=0
            while kill -0 "$pid" 2>/dev/null; do
                p=$(awk '/^VmPeak:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)
                h=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)
                [ -n "$p" ] && [ "$p" -gt "$peak" ] && peak=$p
                [ -n "$h" ] && [ "$h" -gt "$hwm" ] && hwm=$h
                sleep 0.05
            done
            st=0
            wait "$pid" || st=$?
            printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n" "$net" "$v" "$b" "$peak" "$hwm" "$st" \
                "$(date -u +%F)" "$BUILD" >>"$VM"
            echo "vm: $net $v b$b: VmPeak $peak KiB, VmHWM $hwm KiB, status $st"
        done
    done ;;
esac
if [ -e "$OUT/shapes/lenet.txt" ]; then
    if "$PY" "$HERE/plan_rules.py" --tsv "$OUT" "$WORK" >"$WORK/rules_vs_measured.tsv"; then
        mv "$WORK/rules_vs_measured.tsv" "$OUT/rules_vs_measured.tsv"
    else
        echo "plan_rules.py failed: rules_vs_measured.tsv not updated (CAFFE_PB2_DIR: the folder" \
             "of Caffe's caffe_pb2.py, e.g. a CMake build's include/caffe/proto)" >&2
    fi
fi
echo "table: $TSV"
