#!/usr/bin/env bash
# Bad input files: a zero-byte .jpg, a text file named .png, a truncated JPEG, a directory
# named x.jpg (listed), an oversized image. Each is named on stderr with a reason, the output
# holds exactly the good ones; --strict stops with exit 3 and leaves no output, no temporary.
source "$(dirname "$0")/lib/common.sh"

tree=$TMP/tree
cp -r "$LD_TEST_DATA/tree" "$tree"
: > "$tree/cat/zero.jpg"
echo "this is not a PNG" > "$tree/car/text.png"
head -c 4000 "$LD_TEST_DATA/photos/p01.jpg" > "$tree/bird/trunc.jpg"   # cut inside the scan
mkdir "$tree/cat/x.jpg"                                              # a folder, looks like a file
bad=(zero.jpg text.png trunc.jpg)

check "folder mode: exit 0, each bad file named with a reason, 9 good samples written"
run "$DATACONV" "$tree" "$TMP/out.h5" --resize 32 -j 2
expect_rc 0
for f in "${bad[@]}"; do
    grep -Eq "${f}[^/]*: .{3,}" "$TMP/err" ||
        { show; fail "stderr does not name $f with a reason"; }
done
expect_err "converted 9 of"
expect_err "skipped   3"
"$PYTHON" - "$TMP/out.h5" <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    names = [n.decode() if isinstance(n, bytes) else n for n in f["filename"][:]]
    assert f["data"].shape[0] == 9 and len(f["label"]) == 9, (f["data"].shape, names)
    for bad in ("zero.jpg", "text.png", "trunc.jpg", "x.jpg"):
        assert not any(n.endswith(bad) for n in names), (bad, names)
print("9 good samples, no bad one")
PY

check "--strict: exit 3, the first bad file named, no output file and no temporary left"
run "$DATACONV" "$tree" "$TMP/strict.h5" --resize 32 --strict
expect_rc 3
grep -Eq "zero.jpg|text.png|trunc.jpg" "$TMP/err" ||
    { show; fail "--strict did not name the bad file"; }
[ ! -e "$TMP/strict.h5" ] || fail "--strict left $TMP/strict.h5"
leftover=$(find "$TMP" -maxdepth 1 -name 'strict.h5*')
[ -z "$leftover" ] || fail "temporary left behind: $leftover"

check "--strict keeps an existing output untouched"
cp "$TMP/out.h5" "$TMP/keep.h5"
run "$DATACONV" "$tree" "$TMP/keep.h5" --resize 32 --strict
expect_rc 3
cmp -s "$TMP/out.h5" "$TMP/keep.h5" || fail "a failed run changed the existing output"

check "list mode: a listed directory (x.jpg) is named with a reason"
printf 'cat/a.jpg 0\ncat/x.jpg 1\ncat/zero.jpg 1\n' > "$TMP/l.txt"
run "$DATACONV" --list "$TMP/l.txt" --root "$tree" "$TMP/l.h5" --resize 32
expect_rc 0
grep -Eq "x.jpg[^/]*: .{3,}" "$TMP/err" || { show; fail "the directory x.jpg was not named"; }
expect_err "converted 1 of 3"

check "--max-pixels 1000: every image is over the limit -> named, exit 3 (no usable image)"
run "$DATACONV" "$LD_TEST_DATA/tree" "$TMP/big.h5" --resize 32 --max-pixels 1000
expect_rc 3
[ ! -e "$TMP/big.h5" ] || fail "a run without usable images wrote $TMP/big.h5"

check "an empty folder: exit 3 with a message naming it"
mkdir -p "$TMP/empty/a"
run "$DATACONV" "$TMP/empty" "$TMP/e.h5" --resize 32
expect_rc 3
expect_err "$TMP/empty"
echo "bad_files: all checks passed"
