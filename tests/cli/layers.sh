#!/usr/bin/env bash
# scripts/check_layers.sh: the tree follows the one-way module layers of docs/design.md, and
# the check catches an include that goes up a layer or sideways, a "../" or bare include, a
# module missing from its table, and a CLI source reaching into libdata/src.
# Needs no dataconv and no fixtures, so it runs in every configuration; the helpers below are
# those of lib/common.sh, which insists on both.
set -euo pipefail
SRC=${SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ld-layers.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
check() { echo "check: $*"; }
run() { set +e; "$@" >"$TMP/out" 2>"$TMP/err"; rc=$?; set -e; }
show() { echo "--- stderr:" >&2; cat "$TMP/err" >&2; echo "---" >&2; }
expect_rc() { [ "$rc" -eq "$1" ] || { show; fail "expected exit $1, got $rc"; }; }
expect_err() { grep -q -- "$1" "$TMP/err" || { show; fail "stderr lacks '$1'"; }; }

chk=$SRC/scripts/check_layers.sh

check "the tree passes"
run bash "$chk" "$SRC" && expect_rc 0

# A copy of the sources to break one include at a time.
copy() {
    rm -rf "$TMP/root"
    mkdir -p "$TMP/root/libdata" "$TMP/root/cli"
    cp -r "$SRC/libdata/src" "$TMP/root/libdata/"
    cp "$SRC"/cli/*.c "$TMP/root/cli/"
}
# add_include FILE LINE: put an include line at the top of FILE (relative to the copy)
add_include() { sed -i "1i $2" "$TMP/root/$1"; }

check "a store including the reader (up a layer) fails, naming file, line and rule"
copy
add_include libdata/src/store/datum.c '#include "reader/sampler.h"'
run bash "$chk" "$TMP/root" && expect_rc 1
expect_err 'libdata/src/store/datum.c:1: #include "reader/sampler.h": store/ may not depend on reader/'

check "the codec including the source (sideways) fails"
copy
add_include libdata/src/codec/exif.c '#include "source/source.h"'
run bash "$chk" "$TMP/root" && expect_rc 1
expect_err 'codec/ may not depend on source/'

check "the thread module including a store fails"
copy
add_include libdata/src/thread/pool.c '#include "store/store.h"'
run bash "$chk" "$TMP/root" && expect_rc 1
expect_err 'thread/ may not depend on store/'

check "a relative or bare include fails"
copy
add_include libdata/src/resize/geometry.c '#include "../common/ld_internal.h"'
add_include libdata/src/source/src_dir.c '#include "source.h"'
run bash "$chk" "$TMP/root" && expect_rc 1
expect_err 'geometry.c:1: #include "../common/ld_internal.h": spell it from libdata/src'
expect_err 'src_dir.c:1: #include "source.h": spell it from libdata/src ("source/source.h")'

check "a new module folder must be placed in the table"
copy
mkdir "$TMP/root/libdata/src/extra"
echo '#include "common/ld_internal.h"' > "$TMP/root/libdata/src/extra/x.c"
run bash "$chk" "$TMP/root" && expect_rc 1
expect_err 'libdata/src/extra/: a module that is not in the layer table'

check "dataconv including an internal header fails"
copy
add_include cli/dataconv.c '#include "store/store.h"'
run bash "$chk" "$TMP/root" && expect_rc 1
expect_err 'cli/dataconv.c:1: #include "store/store.h": cli/ is a client of the public API'

echo "layers: all checks passed"
