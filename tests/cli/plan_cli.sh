#!/usr/bin/env bash
# dataconv plan (issue 17): usage, exit codes, messages that name file and line, an HDF5Data
# net on a real uint8 HDF5 file (its float32 cost = 4 bytes x samples x (C*H*W + 1 label),
# checked with h5py), the advice (--split, the LibData layer, a smaller --resize), a --ram that
# does not fit (exit 4 naming the largest batch), --shape and --phase test. Issue 26: a deploy
# net is planned as inference and the header says why; fields caffe.proto lacks are refused;
# when nothing fits the advice names what does not grow with the batch; Python/MemoryData
# layers say how to give a shape; the --shape hint only where a shape is missing.
source "$(dirname "$0")/lib/common.sh"
no_out() { if grep -q -- "$1" "$TMP/out"; then cat "$TMP/out" >&2; fail "stdout has '$1'"; fi; }
no_err() { if grep -q -- "$1" "$TMP/err"; then show; fail "stderr has '$1'"; fi; }
DEPLOY=$SRC/tests/data/plan/deploy_caffenet.prototxt

check "help and usage errors"
run "$DATACONV" plan --help && expect_rc 0 && expect_out "Usage: dataconv plan NET.prototxt"
expect_out "within 10%"
run "$DATACONV" plan && expect_rc 2 && expect_err "missing the net"
run "$DATACONV" plan x.prototxt --ram lots && expect_rc 2 && expect_err "\-\-ram 'lots'"
run "$DATACONV" plan x.prototxt --phase deploy && expect_rc 2 && expect_err "train, test or auto"
run "$DATACONV" plan x.prototxt --bogus && expect_rc 2 && expect_err "unknown option '--bogus'"
run "$DATACONV" --help && expect_out "dataconv plan NET.prototxt"

check "a missing file is an I/O error (exit 1) naming it"
run "$DATACONV" plan "$TMP/none.prototxt" && expect_rc 1 && expect_err "none.prototxt: cannot open"

check "an unknown layer type: exit 3, named with its line"
cat >"$TMP/bad.prototxt" <<'NET'
layer { name: "in" type: "Input" top: "data" input_param { shape { dim: 1 dim: 3 dim: 8 dim: 8 } } }

layer { name: "py" type: "Python" bottom: "data" top: "p" }
NET
run "$DATACONV" plan "$TMP/bad.prototxt" && expect_rc 3 && expect_err "bad.prototxt:3: layer 'py'"
expect_err "'Python' is not one"
printf 'layer {\n  name: "x"\n  type: "ReLU" bottom: "a" top: "a"\n' >"$TMP/open.prototxt"
run "$DATACONV" plan "$TMP/open.prototxt" && expect_rc 3 && expect_err "open.prototxt:1:7: '{' opened here is not closed"
no_err "shape"  # the --shape hint only where a shape is missing (issue 26, item 9)

check "HDF5Data on a uint8 file: whole file as float32, advice"
"$DATACONV" -q "$LD_TEST_DATA/tree" "$TMP/tr.h5" --resize 64
echo "$TMP/tr.h5" >"$TMP/list.txt"
cat >"$TMP/net.prototxt" <<NET
layer { name: "data" type: "HDF5Data" top: "data" top: "label"
  hdf5_data_param { source: "$TMP/list.txt" batch_size: 4 } }
layer { name: "conv" type: "Convolution" bottom: "data" top: "conv"
  convolution_param { num_output: 16 kernel_size: 3 } }
layer { name: "ip" type: "InnerProduct" bottom: "conv" top: "ip" inner_product_param { num_output: 3 } }
layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip" bottom: "label" top: "loss" }
NET
run "$DATACONV" plan "$TMP/net.prototxt" --ram 1G --shapes && expect_rc 0
want=$("$PYTHON" -c "import h5py, sys; d = h5py.File(sys.argv[1])['data']; n, c, h, w = d.shape; \
assert d.dtype == 'uint8'; print('%.1f KiB' % (n * (c * h * w + 1) * 4 / 1024))" "$TMP/tr.h5")
expect_out "$want  data source (HDF5 file as float32"
expect_out "TRAIN data  *data  *4 3 64 64 (49152)"
expect_out "TRAIN conv  *conv  *4 16 62 62 (246016)"
expect_out "advice: HDF5Data 'data' holds a whole file of $TMP/list.txt as float32"
expect_out "convert it again with split_bytes 256M"
expect_out "(split_bytes: dataconv --split SIZE; resize_w/resize_h: dataconv --resize WxH"
expect_out "or use the LibData layer"
expect_out "advice: with 40x40 input instead of 64x64 (e.g. resize_w/resize_h 40"

check "a --ram it does not fit: exit 4, the largest batch named, and that batch fits"
run "$DATACONV" plan "$TMP/net.prototxt" --ram 70M --batch 64 && expect_rc 4
expect_err "batch 64 needs"
n=$(sed -n 's/^Largest batch that fits in .*: \([0-9]*\)$/\1/p' "$TMP/out")
if [ -z "$n" ] || [ "$n" -ge 64 ]; then fail "largest batch '$n'"; fi
run "$DATACONV" plan "$TMP/net.prototxt" --ram 70M --batch "$n" && expect_rc 0
run "$DATACONV" plan "$TMP/net.prototxt" --ram 70M --batch $((n + 1)) && expect_rc 4

check "--phase test and --shape: forward only, no gradients or solver"
run "$DATACONV" plan "$TMP/net.prototxt" --phase test --shape data=3,32,32 --batch 2 --shapes --ram 1G
expect_rc 0
expect_out "TEST  data  *data  *2 3 32 32"
if grep -q "parameter gradients\|solver history" "$TMP/out"; then fail "test phase lists parameter gradients or solver history"; fi

check "a deploy net (net inputs, no loss) is inference by default, and the header says why"
run "$DATACONV" plan "$DEPLOY" --ram 8G && expect_rc 0
expect_out "^phase: test (the net has no loss layer; --phase train to plan training)$"
expect_out "Caffe 1.0 host memory, test, batch 10:"
no_out "parameter gradients"
no_out "solver history"
auto=$(sed -n 's/.*peak RSS: \([0-9]*\) bytes.*/\1/p' "$TMP/out")
run "$DATACONV" plan "$DEPLOY" --ram 8G --phase test && expect_rc 0
expect_out "^phase: test (as asked)$"
[ "$(sed -n 's/.*peak RSS: \([0-9]*\) bytes.*/\1/p' "$TMP/out")" = "$auto" ] || fail "auto != --phase test"
run "$DATACONV" plan "$DEPLOY" --ram 8G --phase train && expect_rc 0
expect_out "^phase: train (as asked)$"
expect_out "parameter gradients"
expect_out "solver history"
run "$DATACONV" plan "$TMP/net.prototxt" --ram 1G && expect_rc 0
expect_out "^phase: train (the net has a loss layer; --phase test to plan inference)$"

check "a field caffe.proto lacks is refused (exit 3) with line:column, message type and field"
sed 's/kernel_size: 11 stride: 4/kernel_size: 11 strde: 4/' "$DEPLOY" >"$TMP/strde.prototxt"
run "$DATACONV" plan "$TMP/strde.prototxt" --phase test --ram 8G && expect_rc 3
expect_err "strde.prototxt:7:54: layer 'conv1': message type \"caffe.ConvolutionParameter\" has no field named \"strde\" (did you mean \"stride\"?)"
no_err "shape"
sed 's/lrn_param {/lrn_parm {/' "$DEPLOY" >"$TMP/lrn.prototxt"
run "$DATACONV" plan "$TMP/lrn.prototxt" && expect_rc 3
expect_err "lrn.prototxt:13:3: layer 'norm1': message type \"caffe.LayerParameter\" has no field named \"lrn_parm\""
printf 'net: "%s"\nbase_lr: 0.01\nmax_itre: 10\n' "$DEPLOY" >"$TMP/typo_solver.prototxt"
run "$DATACONV" plan --solver "$TMP/typo_solver.prototxt" && expect_rc 3
expect_err "typo_solver.prototxt:3:1: message type \"caffe.SolverParameter\" has no field named \"max_itre\""

check "nothing fits: the parts that do not grow with the batch, their sizes and cures"
run "$DATACONV" plan "$DEPLOY" --ram 200M && expect_rc 4
expect_out "none (not even batch 1)"
expect_out "advice: batch 10 needs 342 MiB, more than the 190 MiB usable, and no batch size fits: what does not grow with the batch needs 293 MiB by itself"
expect_out "advice: parameters: 217 MiB; the largest: InnerProduct 'fc6' 37.8M (144 MiB), InnerProduct 'fc7' 16.8M (64 MiB)"
expect_out "a smaller input to 'fc6' (256x6x6 per sample"
expect_out "advice: Caffe's own process (binary, libraries, BLAS): 58 MiB"
no_out "(below)"
no_out "split_bytes"  # the translation line only for advice that names conversion parameters
printf 'net: "%s"\ntype: "Adam"\n' "$DEPLOY" >"$TMP/adam.prototxt"
run "$DATACONV" plan --solver "$TMP/adam.prototxt" --ram 500M && expect_rc 4
expect_out "^phase: train (a solver is given; --phase test to plan inference)$"
expect_out "advice: solver history: Adam keeps 3 values per parameter (651 MiB): SGD keeps 1"
expect_out "advice: parameters and their gradients: 434 MiB; the largest: InnerProduct 'fc6' 37.8M (288 MiB)"

check "Python / MemoryData data layers: not supported, and how to give the shape"
cat >"$TMP/py.prototxt" <<'NET'
layer { name: "data" type: "Python" top: "data" top: "label"
  python_param { module: "feed" layer: "Feed" } }
layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip" inner_product_param { num_output: 2 } }
NET
run "$DATACONV" plan "$TMP/py.prototxt" && expect_rc 2
expect_err "py.prototxt:1: layer 'data' (Python): not supported"
expect_err "Give the shape of its top in shapes (data=C,H,W"
expect_err "or plan a copy of the net with an Input layer in its place"
expect_err "(\`shapes\` is --shape NAME=C,H,W here"
no_err "no bottom"
run "$DATACONV" plan "$TMP/py.prototxt" --shape data=3,32,32 --batch 4 --shapes --ram 1G && expect_rc 0
expect_out "TEST  data  *data  *4 3 32 32"
expect_out "TEST  data  *label  *4 (4)"
expect_out "note: Python (layer 'data'): planned as an input of the shape given in shapes"
cat >"$TMP/md.prototxt" <<'NET'
layer { name: "data" type: "MemoryData" top: "data" top: "label"
  memory_data_param { batch_size: 8 channels: 3 height: 32 width: 32 } }
layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip" inner_product_param { num_output: 2 } }
NET
run "$DATACONV" plan "$TMP/md.prototxt" && expect_rc 2
expect_err "(MemoryData): not supported"
expect_err "shapes (data=3,32,32, as its memory_data_param says"
echo "ok"
