#!/usr/bin/env bash
# LMDB memory does not grow with the database: converting 2,400 images peaks within a few MiB
# of converting 240, and reading every record of the big database (sequential and shuffled)
# peaks within a few MiB of reading the small one. (LMDB maps the whole file: before the
# writer dropped its mapping after each commit and the reader switched record bodies to
# pread, RSS grew with every page touched, e.g. 2.9 GiB after one epoch over 3 GB.)
source "$(dirname "$0")/lib/common.sh"
[ -x /usr/bin/time ] || fail "GNU time is missing: apt-get install time (scripts/deps.sh does)"
# Under AddressSanitizer RSS means little (its quarantine keeps up to 256 MiB of freed memory;
# with ASAN_OPTIONS=quarantine_size_mb=0 the conversion grows by 0 MiB here too): the runs still
# happen, only the comparisons are skipped.
exempt="" # why the RSS comparisons are not made
asan_build && exempt="AddressSanitizer build"
emulated && exempt="under $LIBDATA_EMULATOR, whose RSS is the emulator's"


# 240 and 2,400 images: the 24 fixture photos hard-linked 2 x 5 and 4 x 25 times
photo_folder "$TMP/small" ab 5
photo_folder "$TMP/big" abcd 25

# peak_kib CMD...: the command's peak RSS in KiB
peak_kib() {
    /usr/bin/time -f '%M' -o "$TMP/peak" "$@" >"$TMP/out" 2>"$TMP/err" || { show; fail "$*"; }
    tail -n 1 "$TMP/peak"
}

declare -A conv
for s in small big; do
    conv[$s]=$(peak_kib "$DATACONV" "$TMP/$s" "$TMP/$s.lmdb" --resize 224 -q)
done
n_big=$(mdb_stat "$TMP/big.lmdb" | awk '/Entries/ {print $2}')
[ "$n_big" = 2400 ] || fail "big.lmdb holds $n_big records, want 2400"
grow=$(( (conv[big] - conv[small]) / 1024 ))
check "conversion peak RSS: 240 images ${conv[small]} KiB, 2,400 images ${conv[big]} KiB (+$grow MiB)"
[ -n "$exempt" ] || [ "$grow" -lt 6 ] || fail "LMDB conversion memory grows with the database: +$grow MiB"

# Reading every record, sequential and shuffled; then shuffled again after each database was
# dropped from the page cache and read back in file order ("refilled"), as after cat, cp or a
# backup: the cache then holds it in large folios, up to 2 MiB, and one fault maps a whole
# folio. When the reader looked records up through LMDB's tree, each 4 KiB leaf page it touched
# brought its folio into RSS (134 MB for 1,000 records of 150 KB, 299 MB for 9,000; +36 MiB
# here, issue 16). Reads now go by an index of the values' offsets, made at open, with pread.
for pass in seq shuffle refilled; do
    order=$pass
    [ "$pass" = refilled ] && order=shuffle
    declare -A rd
    for s in small big; do
        if [ "$pass" = refilled ]; then
            drop_cache "$TMP/$s.lmdb/data.mdb"
            cat "$TMP/$s.lmdb/data.mdb" >/dev/null
        fi
        rd[$s]=$(peak_kib "$DATACONV" bench "$TMP/$s.lmdb" --batch 64 --order "$order" -j 2 --epochs 2)
        grep -q "samples" "$TMP/out" || { cat "$TMP/out" >&2; fail "bench printed no result"; }
    done
    grow=$(( (rd[big] - rd[small]) / 1024 ))
    check "reading ($pass): 240 records ${rd[small]} KiB, 2,400 records ${rd[big]} KiB (+$grow MiB)"
    [ -n "$exempt" ] || [ "$grow" -lt 12 ] ||
        fail "LMDB reading memory grows with the database ($pass): +$grow MiB"
done
# dataconv info decodes the first records' values through LMDB's map (labels, shapes): the
# pages it touched stayed mapped, 1.2 GiB of RSS for a 1.3 GB database, until the scan dropped
# the map every LD_LMDB_DROP_EVERY records; it now reads the values with pread, as the reader
# does (+16 MiB here before, on the database just re-read with cat; +6 after).
declare -A inf
for s in small big; do
    inf[$s]=$(peak_kib "$DATACONV" info "$TMP/$s.lmdb")
    grep -q "labels:" "$TMP/out" || { cat "$TMP/out" >&2; fail "info printed no labels line"; }
done
grow=$(( (inf[big] - inf[small]) / 1024 ))
check "dataconv info: 240 records ${inf[small]} KiB, 2,400 records ${inf[big]} KiB (+$grow MiB)"
[ -n "$exempt" ] || [ "$grow" -lt 12 ] || fail "dataconv info's memory grows with the database: +$grow MiB"
[ -z "$exempt" ] || echo "RSS comparisons skipped: $exempt"
echo "lmdb_memory: all checks passed"
