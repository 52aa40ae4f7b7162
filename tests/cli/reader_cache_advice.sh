#!/usr/bin/env bash
# The HDF5 reader's read-ahead advice (h5_store.c, struct ld_store_ctx): posix_fadvise(WILLNEED)
# for a batch's samples only while they are not in the page cache. On warm data the advice
# walked the page cache for every page again and cost ~11 % of a worker's time; on cold data
# it must still be given, so that a disk sees a whole batch's requests at once. Counted with
# strace; the batches are the same either way (checksums of the two runs agree). (A piece whose
# reads hit the cache after it was advised no longer makes the next one warm unprobed: see
# tests/cli/reader_block_reads.sh for the bytes a cold block-shuffled epoch advises.)
source "$(dirname "$0")/lib/common.sh"

command -v strace > /dev/null || { echo "skipped: strace is not installed (apt install strace)"; exit 77; }
asan_build && { echo "skipped: an ASan build (the counts are about the release reader)"; exit 77; }

check "a 1200-sample raw file (3x96x96 uint8, contiguous: direct pread)"
"$PYTHON" -c "
import h5py, numpy as np
with h5py.File('$TMP/raw.h5', 'w') as f:
    f['data'] = np.random.default_rng(1).integers(0, 255, (1200, 3, 96, 96), dtype=np.uint8)
    f['label'] = np.arange(1200, dtype=np.int32) % 10
"
# advice_count ARGS...: fadvise64 / fadvise64_64 (i386) WILLNEED calls of one `dataconv bench` run, and its stdout in
# $TMP/out
advice_count() {
    strace -f -qq -e trace=/^fadvise64 -o "$TMP/trace" "$DATACONV" bench "$TMP/raw.h5" \
        --batch 128 --shuffle -j 2 "$@" > "$TMP/out" 2> "$TMP/err" || { show; fail "bench failed"; }
    grep -c 'POSIX_FADV_WILLNEED' "$TMP/trace" || true
}

check "warm page cache: 3 epochs (3600 samples) advise at most the first piece of each thread"
cat "$TMP/raw.h5" > /dev/null
warm=$(advice_count --epochs 3)
sum_warm=$(grep -o 'checksum [0-9]*' "$TMP/out")
echo "  WILLNEED calls, warm: $warm"
[ "$warm" -le 256 ] || fail "warm cache: $warm WILLNEED calls for 3600 cached samples (want <= 256)"

check "cold page cache (POSIX_FADV_DONTNEED): the samples are still advised"
drop_cache "$TMP/raw.h5"
if command -v fincore > /dev/null; then
    cached=$(fincore -b -n -o RES "$TMP/raw.h5" | tr -d ' ')
    [ "$cached" -lt $((8 << 20)) ] ||
        { echo "skipped: the file stays in the page cache after DONTNEED ($cached bytes)"; exit 77; }
fi
cold=$(advice_count --epochs 3)
sum_cold=$(grep -o 'checksum [0-9]*' "$TMP/out")
echo "  WILLNEED calls, cold: $cold"
# (not all 1200 of the first epoch: pieces the kernel's own read-ahead already brought in are
# read from the cache, and need none; advising only the first piece of each thread gives 128)
[ "$cold" -ge 384 ] || fail "cold cache: only $cold WILLNEED calls (want >= 384, 3 pieces per thread)"
[ "$sum_warm" = "$sum_cold" ] || fail "warm and cold runs differ: $sum_warm vs $sum_cold"
echo "reader_cache_advice: all checks passed"
