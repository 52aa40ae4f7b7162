#!/usr/bin/env bash
# scripts/check_layers.sh: the tree follows the one-way module layers of docs/design.md, and
# the check catches an include that goes up a layer or sideways, a "../" or bare include, a
# module missing from its table, and a CLI source reaching into libdata/src.
# Needs no dataconv and no fixtures, so it runs in every configuration: lib/helpers.sh, not
# lib/common.sh, which insists on both.
set -euo pipefail
source "$(dirname "$0")/lib/helpers.sh"

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
# refused FILE LINE MESSAGE: in a fresh copy with LINE put at the top of FILE, the check fails
# and says MESSAGE
refused() {
    copy
    add_include "$1" "$2"
    run bash "$chk" "$TMP/root" && expect_rc 1
    expect_err "$3"
}

check "a store including the reader (up a layer) fails, naming file, line and rule"
refused libdata/src/store/lmdb/datum.c '#include "reader/sampler.h"' \
    'libdata/src/store/lmdb/datum.c:1: #include "reader/sampler.h": store/ may not depend on reader/'

check "the codec including the source (sideways) fails"
refused libdata/src/codec/exif.c '#include "source/source.h"' \
    'codec/ may not depend on source/'

check "the thread module including a store fails"
refused libdata/src/thread/pool.c '#include "store/store.h"' \
    'thread/ may not depend on store/'

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
refused cli/dataconv.c '#include "store/store.h"' \
    'cli/dataconv.c:1: #include "store/store.h": cli/ is a client of the public API'

check "a store including the converter's public header (the vocabulary goes down, not up) fails"
refused libdata/src/store/hdf5/h5_write.c '#include "libdata/convert.h"' \
    'h5_write.c:1: #include "libdata/convert.h": store/ may not include the public convert.h'

check "a source file including the reader's public header fails; types.h is everyone's"
refused libdata/src/source/src_list.c '#include "libdata/reader.h"' \
    'source/ may not include the public reader.h'
copy
add_include libdata/src/source/src_list.c '#include "libdata/types.h"'
run bash "$chk" "$TMP/root" && expect_rc 0

check "a new module folder nested in one that exists belongs to it (store/hdf5 is store)"
refused libdata/src/store/hdf5/h5_store.c '#include "reader/xform.h"' \
    'h5_store.c:1: #include "reader/xform.h": store/ may not depend on reader/'

check "a layer table with a cycle fails, naming it"
copy
mkdir -p "$TMP/root/scripts"
sed 's/^    \[store\]="common thread codec"$/    [store]="common thread codec shard"/' "$chk" >"$TMP/root/scripts/check_layers.sh"
grep -q '\[store\]="common thread codec shard"' "$TMP/root/scripts/check_layers.sh" ||
    fail "could not edit the table of the copy"
run bash "$TMP/root/scripts/check_layers.sh" "$TMP/root" && expect_rc 1
expect_err 'the layer table has a cycle through'

echo "layers: all checks passed"
