#!/usr/bin/env bash
# The LMDB reader's open walks the tree once into its record index (lmdb_store.c, build_index).
# The map is MDB_NORDAHEAD, so on a cold cache each leaf page would be its own 4 KiB read: for
# small records, which live in the leaf pages, that is the whole file one page at a time (a
# cold open of 100k 3x24x24 records took 4-9 s, and grew with the records). The walk therefore
# advises 16 MiB ahead of itself when the tree's pages are most of the file, and not when the
# records lie in overflow pages (advising there would read the values too). Counted with
# strace: posix_fadvise calls of exactly 16 MiB are the walk's (the reader's own advice is one
# record or a run of neighbours). Times are not checked (they depend on the disk).
source "$(dirname "$0")/lib/common.sh"

command -v strace > /dev/null || { echo "skipped: strace is not installed (apt install strace)"; exit 77; }
asan_build && { echo "skipped: an ASan build (LeakSanitizer does not run under strace; the counts are about the release reader)"; exit 77; }

photo_folder "$TMP/in" ab 25 # 1200 images
"$DATACONV" "$TMP/in" "$TMP/small.lmdb" --resize 24 -q || { show; fail "conversion (24x24) failed"; }
"$DATACONV" "$TMP/in" "$TMP/large.lmdb" --resize 96 -q || { show; fail "conversion (96x96) failed"; }
# The walk is what is measured: without the index our writer saves (lmdb_saved_index.sh), as
# for a database of another tool or one changed since
rm "$TMP/small.lmdb/libdata.idx" "$TMP/large.lmdb/libdata.idx"

# walk_advice DB: the number of 16 MiB WILLNEED calls while `dataconv bench` opens DB and reads
# one epoch, from a cold cache (data.mdb dropped); the bench's stdout in $TMP/out
walk_advice() {
    drop_cache "$1/data.mdb"
    strace -f -qq -e trace=/^fadvise64 -o "$TMP/trace" "$DATACONV" bench "$1" --batch 100 -j 1 \
        > "$TMP/out" 2> "$TMP/err" || { show; fail "bench $1 failed"; }
    grep -Ec "^([0-9]+ +)?fadvise64(_64)?\([0-9]+, [0-9]+, 16777216, POSIX_FADV_WILLNEED" "$TMP/trace" || true
}

check "small records (3x24x24: in the leaf pages): the index walk advises ahead"
n=$(walk_advice "$TMP/small.lmdb")
echo "  16 MiB WILLNEED calls during the open: $n"
[ "$n" -ge 1 ] || fail "the walk over a cold database of small records gave no advice"
sum_cold=$(grep -o 'checksum [0-9]*' "$TMP/out")
"$DATACONV" bench "$TMP/small.lmdb" --batch 100 -j 1 > "$TMP/out" 2> "$TMP/err" || { show; fail "bench failed"; }
sum_warm=$(grep -o 'checksum [0-9]*' "$TMP/out")
[ "$sum_cold" = "$sum_warm" ] || fail "cold and warm reads differ: $sum_cold vs $sum_warm"

check "large records (3x96x96: overflow pages between the leaf pages): no walk advice"
n=$(walk_advice "$TMP/large.lmdb")
echo "  16 MiB WILLNEED calls during the open: $n"
[ "$n" -eq 0 ] || fail "the walk advised $n x 16 MiB over a database whose records lie outside its leaf pages"
echo "lmdb_open_cold: all checks passed"
