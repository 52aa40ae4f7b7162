#!/usr/bin/env bash
# The library's messages name parameters (max_pixels, dtype, strict); dataconv and dataconv
# bench take the parameter from the error detail and name its command-line flag on the next
# line (issue 14, item 3). And cli/ and bindings/ do not search message text for the cause.
source "$(dirname "$0")/lib/common.sh"
cd "$TMP"

check "--max-pixels 1000 --strict: the message says max_pixels, the next line --max-pixels"
run "$DATACONV" "$LD_TEST_DATA/tree" big.h5 --resize 16 --max-pixels 1000 --strict
expect_rc 3
expect_err "over the 1000-pixel limit (raise it with max_pixels)"
expect_err "^dataconv: max_pixels is --max-pixels on the command line$"
[ ! -e big.h5 ] || fail "big.h5 written"

check "without --strict, every image skipped over the limit: the last line names --max-pixels"
run "$DATACONV" "$LD_TEST_DATA/tree" big.h5 --resize 16 --max-pixels 1000
expect_rc 3
expect_err "every one over a limit: max_pixels or the format's"
expect_err "^dataconv: max_pixels is --max-pixels on the command line$"

check "--mode max into raw HDF5: resize_mode in the message, --mode and --quality in the hint"
run "$DATACONV" "$LD_TEST_DATA/tree" max.h5 --resize 16 --mode max
expect_rc 1
expect_err "resize_mode max keeps each image's aspect"
expect_err "hint: on the command line: --quality Q, or --mode squash|crop|pad"

check "bench: a mean with uint8 output names dtype, then --dtype f32"
run "$DATACONV" "$LD_TEST_DATA/tree" t.h5 --resize 16 -q
expect_rc 0
run "$DATACONV" bench t.h5 --mean-values 100
expect_rc 2
expect_err "needs float32 output (set dtype to float32)"
expect_err "^dataconv: in dataconv bench that is --dtype f32$"

check "bench: crop_w without crop_h names --crop WxH"
run "$DATACONV" bench t.h5 --crop-w 8
[ "$rc" -ne 0 ] || fail "crop_w alone was accepted"
expect_err "set both crop_w and crop_h"
expect_err "in dataconv bench that is --crop WxH"

check "scripts/check_no_strstr.sh: no search of message text in cli/ and bindings/"
"$SRC/scripts/check_no_strstr.sh" "$SRC" || fail "check_no_strstr.sh found searches of message text"
check "scripts/check_no_flags.sh: no dataconv flag in libdata's text; a planted one is caught"
"$SRC/scripts/check_no_flags.sh" "$SRC" || fail "check_no_flags.sh found flags in library text"
mkdir -p "$TMP/tree_copy/libdata"
cp -r "$SRC/libdata/src" "$TMP/tree_copy/libdata/"
printf 'static const char *m = "raise it with --max-pixels"; /* --comment ok */\n' \
    >> "$TMP/tree_copy/libdata/src/common/ld_common.c"
run "$SRC/scripts/check_no_flags.sh" "$TMP/tree_copy"
expect_rc 1
expect_err "ld_common.c:[0-9]*: --max-pixels in"
if grep -q -- "--comment" "$TMP/err"; then show; fail "a flag in a comment was reported"; fi
echo "error_flags: all checks passed"
