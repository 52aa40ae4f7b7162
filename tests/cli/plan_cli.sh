#!/usr/bin/env bash
# dataconv plan (issue 17): usage, exit codes, messages that name file and line, an HDF5Data
# net on a real uint8 HDF5 file (its float32 cost = 4 bytes x samples x (C*H*W + 1 label),
# checked with h5py), the advice (--split, the LibData layer, a smaller --resize), a --ram that
# does not fit (exit 4 naming the largest batch), --shape and --phase test.
source "$(dirname "$0")/lib/common.sh"

check "help and usage errors"
run "$DATACONV" plan --help && expect_rc 0 && expect_out "Usage: dataconv plan NET.prototxt"
expect_out "within 10%"
run "$DATACONV" plan && expect_rc 2 && expect_err "missing the net"
run "$DATACONV" plan x.prototxt --ram lots && expect_rc 2 && expect_err "\-\-ram 'lots'"
run "$DATACONV" plan x.prototxt --phase deploy && expect_rc 2 && expect_err "train or test"
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
echo "ok"
