#!/usr/bin/env bash
# Class folders and files whose names are not UTF-8 (Latin-1 bytes, as old archives have):
# every output keeps the exact bytes and stays readable by the usual tools. h5py gets bytes
# for such class names (it cannot make a str), the LMDB sidecar stays valid JSON with
# Python's surrogateescape (json.load works, .encode("utf-8", "surrogateescape") gives the
# bytes back), and `dataconv info` prints both.
source "$(dirname "$0")/lib/common.sh"
export LC_ALL=C
src=$TMP/in
mkdir -p "$src/ok" "$src/$(printf 'caf\xe9')" "$src/$(printf 'na\xefve \xe2\x9c\x93')"
cp "$LD_TEST_DATA"/photos/p0[0-2].jpg "$src/ok/"
cp "$LD_TEST_DATA"/photos/p0[3-4].jpg "$src/$(printf 'caf\xe9')/"
cp "$LD_TEST_DATA/photos/p05.jpg" "$src/$(printf 'na\xefve \xe2\x9c\x93')/$(printf 'p\xf6.jpg')"

for out in out.h5 out.lmdb; do
    check "$out: converted, the class names and file names keep their bytes"
    run "$DATACONV" "$src" "$TMP/$out" --resize 32 -j 2
    expect_rc 0
    "$PYTHON" - "$TMP/$out" <<'PY' || fail "$out: names not readable as the original bytes"
import json, os, sys
out = sys.argv[1]
want = sorted(os.fsencode(n) for n in os.listdir(os.path.join(os.path.dirname(out), "in")))
def as_bytes(v):
    return v if isinstance(v, bytes) else v.encode("utf-8", "surrogateescape")
if out.endswith(".h5"):
    import h5py
    with h5py.File(out, "r") as f:
        classes = [as_bytes(c) for c in f.attrs["class_names"]]
        files = [as_bytes(n) for n in f["filename"][:]]
        assert len(f["data"]) == 6, len(f["data"])
else:
    with open(os.path.join(out, "libdata.json"), encoding="utf-8") as fh:
        meta = json.load(fh)
    classes = [as_bytes(c) for c in meta["class_names"]]
    import lmdb
    with lmdb.open(out, readonly=True, lock=False).begin() as t:
        files = [k.split(b"_", 1)[1] for k, _ in t.cursor()]
assert classes == want, (classes, want)
assert b"na\xefve \xe2\x9c\x93/p\xf6.jpg" in files, files
print("classes", classes)
PY
    run "$DATACONV" info "$TMP/$out"
    expect_rc 0
    grep -aq "caf" "$TMP/out" || { cat "$TMP/out" >&2; fail "$out: info does not list the classes"; }
done
echo "non_utf8_names: all checks passed"
