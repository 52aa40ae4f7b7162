#!/usr/bin/env bash
# The bad-input corpus (tests/data/make_bad_corpus.py, made once into $LD_TEST_DATA/bad):
# damaged JPEGs/PNGs and TIFF/WebP/GIF/BMP/PNM files, bombs, non-images, symlink loops, a FIFO, an unreadable file and
# non-UTF-8 names next to good images. For HDF5 raw/encoded and LMDB output: no crash (exit
# >= 128) and no hang (timeout), every bad file named on stderr with a reason, and the output
# holds exactly the good images (checked with h5py / python-lmdb). Also --strict, list mode
# (a listed FIFO must not block), and the stale-JPEG-table regression (one worker decoding a
# JPEG without DQT after a good one).
set -euo pipefail
: "${DATACONV:?set DATACONV to the dataconv binary}"
: "${LD_TEST_DATA:?set LD_TEST_DATA to the fixtures folder (tests/data/make_fixtures.py)}"
PYTHON=${PYTHON:-/usr/bin/python3}
SRC=${SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/dataconv-hard.XXXXXX")
trap 'chmod -R u+rwx "$TMP" 2>/dev/null; rm -rf "$TMP"' EXIT
export LC_ALL=C
fail() { echo "FAIL: $*" >&2; exit 1; }
check() { echo "check: $*"; }
# run CMD...: stdout/stderr in $TMP/out, $TMP/err, exit code in $rc; killed after 120 s
run() {
    set +e
    timeout -s KILL 120 "$@" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    set -e
    [ "$rc" -ne 137 ] || fail "hang: killed after 120 s: $*"
    [ "$rc" -lt 128 ] || { cat "$TMP/err" >&2; fail "crash: exit $rc: $*"; }
    ! grep -Eq "ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:|WARNING: ThreadSanitizer|ERROR: ThreadSanitizer" "$TMP/err" || { cat "$TMP/err" >&2; fail "sanitizer report: $*"; }
}
show() { echo "--- stderr:" >&2; cat "$TMP/err" >&2; echo "---" >&2; }
expect_rc() { [ "$rc" -eq "$1" ] || { show; fail "expected exit $1, got $rc"; }; }

# The corpus, made once per fixture folder (atomically: concurrent runs do not see half of it).
BAD=$LD_TEST_DATA/bad
if [ ! -f "$BAD/MANIFEST" ]; then
    part=$LD_TEST_DATA/bad.tmp-$$
    rm -rf "$part"
    "$PYTHON" "$SRC/tests/data/make_bad_corpus.py" "$LD_TEST_DATA/photos" "$part"
    mv -T "$part" "$BAD" 2>/dev/null || { chmod -R u+rwx "$part"; rm -rf "$part"; }
fi
[ -f "$BAD/MANIFEST" ] || fail "no corpus at $BAD"
if [ -r "$BAD/tree/bad/unreadable.jpg" ]; then
    readable=1
    echo "note: running as uid $(id -u): chmod 000 does not stop this user from reading" \
         "(root has CAP_DAC_OVERRIDE), so unreadable.jpg is expected to CONVERT here"
else
    readable=0
fi
n_entries=$(wc -l < "$BAD/MANIFEST")
echo "corpus: $n_entries entries ($(cut -f1 "$BAD/MANIFEST" | sort | uniq -c | tr '\n' ' '))"

# verify OUT KIND: checks stderr ($TMP/err) and OUT against the manifest
verify() {
    "$PYTHON" - "$BAD" "$TMP/err" "$1" "$2" "$readable" <<'PY'
import os, re, sys
bad, errf, out, kind, readable = sys.argv[1:6]
root = os.path.join(bad, "tree").encode()
err = open(errf, "rb").read()
want, must_name = set(), []
for line in open(os.path.join(bad, "MANIFEST"), "rb").read().splitlines():
    expect, rel, why = line.split(b"\t")
    if expect == b"unreadable":
        expect = b"good" if readable == "1" else b"bad"
    if expect == b"good":
        want.add(rel)
    elif expect == b"bad":
        must_name.append((rel, why))
# every bad file named, with a reason after the name
missing = [(r, w) for r, w in must_name
           if not re.search(re.escape(root + b"/" + r) + rb": .{3,}", err)]
assert not missing, "bad files not named with a reason: %r" % missing
if kind == "h5":
    import h5py
    with h5py.File(out, "r") as f:
        names = [bytes(n) if not isinstance(n, str) else n.encode() for n in f["filename"][:]]
        n = len(f["label"])
        labels = list(f["label"][:])
        classes = [c.decode() if isinstance(c, bytes) else c for c in f.attrs["class_names"]]
        pix = f["data"] if "data" in f else f["encoded"]
        assert pix.shape[0] in (n, ) or "encoded" in f, (pix.shape, n)
        if "offsets" in f:
            off = f["offsets"][:]
            assert len(off) == n + 1 and (off[1:] > off[:-1]).all(), off
else:
    import lmdb
    env = lmdb.open(out, readonly=True, lock=False)
    with env.begin() as txn:
        keys = [k for k, _ in txn.cursor()]
    names = [k.split(b"_", 1)[1] for k in keys]
    for i, k in enumerate(keys):
        assert k.startswith(b"%08d_" % i), k
    n, labels, classes = len(keys), None, ["bad", "good"]
got = set(names)
assert len(names) == len(got), "duplicates in output"
assert got == want, "output differs from the good set:\n extra %r\n missing %r" % (
    sorted(got - want), sorted(want - got))
if labels is not None:
    assert classes == ["bad", "good"], classes
    for nm, lab in zip(names, labels):
        assert lab == (1 if nm.startswith(b"good/") else 0), (nm, lab)
print("%s: %d good images exactly, %d bad files named with a reason" % (kind, n, len(must_name)))
PY
}

check "folder -> HDF5 raw (-j 2): exit 0, bad files named, exactly the good images"
run "$DATACONV" "$BAD/tree" "$TMP/raw.h5" --resize 32 -j 2
expect_rc 0
verify "$TMP/raw.h5" h5

check "folder -> HDF5 encoded original bytes: the same (bytes are validated, not copied blindly)"
run "$DATACONV" "$BAD/tree" "$TMP/enc.h5" --encoded -j 2
expect_rc 0
verify "$TMP/enc.h5" h5

check "folder -> HDF5 JPEG q80 with --max-side 64"
run "$DATACONV" "$BAD/tree" "$TMP/q.h5" --quality 80 --max-side 64 -j 1
expect_rc 0
verify "$TMP/q.h5" h5

check "folder -> LMDB raw: the same"
run "$DATACONV" "$BAD/tree" "$TMP/raw.lmdb" --resize 32 -j 2
expect_rc 0
verify "$TMP/raw.lmdb" lmdb

check "--strict: exit 3, the first bad file named, no output and no temporary"
run "$DATACONV" "$BAD/tree" "$TMP/strict.h5" --resize 32 --strict
expect_rc 3
grep -q "tree/bad/" "$TMP/err" || { show; fail "--strict did not name the bad file"; }
[ -z "$(compgen -G "$TMP/strict.h5*" || true)" ] || fail "--strict left output behind"

check "list mode over every entry (FIFO, directory, loops listed explicitly): no hang"
cut -f2 "$BAD/MANIFEST" | sed 's/$/ 0/' > "$TMP/all.txt"
echo "bad/fifo.jpg 0" >> "$TMP/all.txt"
run "$DATACONV" --list "$TMP/all.txt" --root "$BAD/tree" "$TMP/list.h5" --resize 32 -j 2
expect_rc 0
grep -Eq "fifo.jpg: .{3,}" "$TMP/err" || { show; fail "the listed FIFO was not named"; }
grep -Eq "x.jpg: .{3,}" "$TMP/err" || { show; fail "the listed directory x.jpg was not named"; }
good=$(grep -c '^good' "$BAD/MANIFEST")
[ "$readable" = 1 ] && good=$((good + 1))
grep -q "converted $good of" "$TMP/err" || { show; fail "list mode: expected $good converted"; }

check "regression: one worker decodes a JPEG without DQT after a good JPEG -> refused"
mkdir -p "$TMP/dqt/c"
cp "$LD_TEST_DATA/photos/p00.jpg" "$TMP/dqt/c/a_good.jpg"
cp "$BAD/tree/bad/no_dqt.jpg" "$TMP/dqt/c/b_no_dqt.jpg"
run "$DATACONV" "$TMP/dqt" "$TMP/dqt.h5" --resize 32 -j 1
expect_rc 0
grep -q "b_no_dqt.jpg: JPEG: Quantization table" "$TMP/err" ||
    { show; fail "a JPEG without quantization tables was decoded with the previous file's"; }
echo "hardening_bad_corpus: all checks passed ($n_entries corpus entries, 6 conversions)"
