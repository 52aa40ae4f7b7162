#!/usr/bin/env bash
# The LMDB reader's read-ahead advice (lmdb_store.c, struct ld_store_ctx): posix_fadvise(WILLNEED)
# for a batch's records only while they are not in the page cache, as the HDF5 reader does
# (reader_cache_advice.sh). On warm data the advice walked the page cache for every page again
# (6 % of a warm shuffled read's CPU time); on cold data it must still be given, so that a disk
# sees a whole batch's requests at once. Counted with strace: the number of WILLNEED calls, not
# the bytes read waiting for I/O (those depend on the kernel's read-ahead timing). The batches
# are the same either way (checksums of the runs agree).
source "$(dirname "$0")/lib/common.sh"

command -v strace > /dev/null || { echo "skipped: strace is not installed (apt install strace)"; exit 77; }
asan_build && { echo "skipped: an ASan build (the counts are about the release reader)"; exit 77; }

check "a 1200-record raw LMDB (3x96x96 uint8)"
photo_folder "$TMP/in" ab 25
"$DATACONV" "$TMP/in" "$TMP/raw.lmdb" --resize 96 -q || { show; fail "conversion failed"; }
mdb="$TMP/raw.lmdb/data.mdb"
# trace ARGS...: "CALLS LARGEST ADVISED MOST ADVICE WAITED UNADVISED PROBES" (lib/read_trace.py) of
# one `dataconv bench` run (128-record batches, shuffled, 2 threads), and its stdout in $TMP/out
trace() {
    rm -f "$TMP"/trace.*
    strace -ff -qq -s 0 -e trace=pread64,preadv,preadv2,/^fadvise64 -o "$TMP/trace" "$DATACONV" bench \
        "$TMP/raw.lmdb" --batch 128 --shuffle -j 2 "$@" > "$TMP/out" 2> "$TMP/err" || { show; fail "bench failed"; }
    "$PYTHON" "$SRC/tests/cli/lib/read_trace.py" "$TMP"/trace.*
}

check "warm page cache: 3 epochs (3600 records) advise about the first piece of each thread"
cat "$mdb" > /dev/null
trace --epochs 1 > /dev/null # once through the reader's own reads (cat may leave read-ahead marks)
sum_one=$(grep -o 'checksum [0-9]*' "$TMP/out")
read -r _ _ _ _ warm _ _ probes < <(trace --epochs 3)
sum_warm=$(grep -o 'checksum [0-9]*' "$TMP/out")
echo "  WILLNEED calls, warm: $warm; cache probes (preadv2 RWF_NOWAIT): $probes"
if [ "$probes" -gt 0 ]; then
    # Before: one call per record (3600). Now the first piece of each thread (64 records, one
    # call each unless neighbours), and a piece after a read that missed.
    [ "$warm" -le 256 ] || fail "warm cache: $warm WILLNEED calls for 3600 cached records (want <= 256)"
elif ! emulated; then # Linux >= 4.14 has RWF_NOWAIT for buffered reads
    fail "no cache probe (preadv2 RWF_NOWAIT) in a native run: the reader cannot tell a warm cache"
else # no preadv2 here (qemu-user 7.2 has none for i386 guests): the reader advises every piece
    echo "  (no probe here: the reader cannot tell a warm cache, and advises every piece)"
    [ "$warm" -ge 1200 ] || fail "warm cache without a probe: only $warm WILLNEED calls (want >= 1200)"
fi

check "cold page cache (POSIX_FADV_DONTNEED): one epoch's records are still advised"
drop_cache "$mdb"
if command -v fincore > /dev/null; then
    cached=$(fincore -b -n -o RES "$mdb" | tr -d ' ')
    [ "$cached" -lt $((4 << 20)) ] ||
        { echo "skipped: the file stays in the page cache after DONTNEED ($cached bytes)"; exit 77; }
fi
read -r _ _ _ _ cold _ _ _ < <(trace --epochs 1)
sum_cold=$(grep -o 'checksum [0-9]*' "$TMP/out")
echo "  WILLNEED calls, one cold epoch of 1200 records: $cold"
# Shuffled records are rarely neighbours, so an advised piece costs about one call per record;
# a cold piece is found so by its first read (or by looks_cached after an advised piece). The
# kernel's read-ahead of a small random read is the read itself, so nearly every piece is
# advised: 1200 - 1 piece at most when one probe happened to hit. Half is the bound.
[ "$cold" -ge 600 ] || fail "cold cache: only $cold WILLNEED calls for 1200 records (want >= 600)"
[ "$sum_one" = "$sum_cold" ] || fail "warm and cold epochs differ: $sum_one vs $sum_cold"

check "warm again after the cold epoch: 3 epochs, the same batches as the first warm run"
read -r _ _ _ _ again _ _ _ < <(trace --epochs 3)
sum_again=$(grep -o 'checksum [0-9]*' "$TMP/out")
echo "  WILLNEED calls: $again"
[ "$probes" -eq 0 ] || [ "$again" -le 256 ] ||
    fail "warm after a cold epoch: $again WILLNEED calls (want <= 256)"
[ "$sum_warm" = "$sum_again" ] || fail "warm runs differ: $sum_warm vs $sum_again"
echo "reader_cache_advice_lmdb: all checks passed"
