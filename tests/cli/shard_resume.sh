#!/usr/bin/env bash
# Resume (--shard): re-running the same command skips a part that exists complete from the
# same run ("part K/N: NAME already complete, skipped", file untouched) and refuses, naming the
# file and what differs, a part of another run (other options, another input), a single run's
# output, a renamed part, a truncated part; for HDF5 and LMDB. Then the kill test: 8 tasks run
# at once, 3 are killed (SIGKILL) while converting; re-running all 8 converts exactly those 3
# (the other 5 say "already complete"), removes what the killed ones left, and the parts equal
# an uninterrupted run (h5py, shard_parts_check.py) and, when this dataconv has `merge`, the
# merged file equals a single run's.
source "$(dirname "$0")/lib/common.sh"

tree=$LD_TEST_DATA/tree
checker=$SRC/tests/python/shard_parts_check.py
sig() { stat -c '%i %Y %s' "$1"; } # inode, mtime, size: unchanged means untouched
# age FILE: sets its mtime to 2001, so that a rewrite, which sets it to now, shows in sig
# without waiting for the clock's second to turn (dataconv does not look at mtimes)
age() { touch -m -d @1000000000 "$1"; }

for kind in h5 lmdb; do
    out=$TMP/r.$kind
    p1=$TMP/r-00001-of-00003.$kind
    check "$kind: a complete part of the same run is skipped"
    for k in 0 1 2; do "$DATACONV" "$tree" "$out" --resize 16 --shard $k/3 -q; done
    f1=$p1
    [ "$kind" = h5 ] || f1=$p1/data.mdb
    age "$f1"
    before=$(sig "$f1")
    run "$DATACONV" "$tree" "$out" --resize 16 --shard 1/3
    expect_rc 0
    expect_err "part 1/3: $p1 already complete, skipped"
    ! grep -q "converted" "$TMP/err" || { show; fail "$kind: the complete part was converted again"; }
    after=$(sig "$f1")
    [ "$before" = "$after" ] || fail "$kind: $p1 was rewritten ($before -> $after)"

    check "$kind: a part of a run with other options is refused, naming the file and the option"
    run "$DATACONV" "$tree" "$out" --resize 20 --shard 1/3
    expect_rc 1
    expect_err "$p1 is from another run"
    expect_err "made with resize_w 16 (this run: 20)"
    expect_err "remove it to convert this part again"
    run "$DATACONV" "$tree" "$out" --resize 16 --gray --shard 1/3
    expect_rc 1
    expect_err "made with channel_order BGR (this run: GRAY)"
    run "$DATACONV" "$tree" "$out" --resize 16 --shuffle --seed 4 --shard 1/3
    expect_rc 1
    expect_err "another input listing (file names, labels, order, shuffle seed"
    check "$kind: other N is refused"
    cp -r "$p1" "$TMP/r-00001-of-00004.$kind"
    run "$DATACONV" "$tree" "$out" --resize 16 --shard 1/4
    expect_rc 1
    expect_err "is part 1 of 3 parts, this run makes 4 parts"
    check "$kind: a renamed part (part 2's file under part 1's name) is refused"
    rm -rf "$p1"
    cp -r "$TMP/r-00002-of-00003.$kind" "$p1"
    run "$DATACONV" "$tree" "$out" --resize 16 --shard 1/3
    expect_rc 1
    expect_err "$p1 holds part 2, not part 1"
    check "$kind: a single run's output under a part's name is refused"
    rm -rf "$p1"
    "$DATACONV" "$tree" "$p1" --resize 16 -q
    run "$DATACONV" "$tree" "$out" --resize 16 --shard 1/3
    expect_rc 1
    expect_err "$p1 exists but is not a shard part"
    check "$kind: a file added to the input makes another run"
    rm -rf "$p1" "$TMP/t2"
    cp -r "$tree" "$TMP/t2"
    "$DATACONV" "$TMP/t2" "$out" --resize 16 --shard 1/3 -q
    cp "$LD_TEST_DATA/photos/p00.jpg" "$TMP/t2/cat/zz.jpg"
    run "$DATACONV" "$TMP/t2" "$out" --resize 16 --shard 1/3
    expect_rc 1
    expect_err "is from another run"
    expect_err "this run lists 10: the input changed"
done

check "h5: a truncated part is refused, not taken as complete"
rm -f "$TMP/r-00001-of-00003.h5"
"$DATACONV" "$tree" "$TMP/r.h5" --resize 16 --shard 1/3 -q
truncate -s 3000 "$TMP/r-00001-of-00003.h5"
run "$DATACONV" "$tree" "$TMP/r.h5" --resize 16 --shard 1/3
expect_rc 1
expect_err "r-00001-of-00003.h5 exists but is not a complete libdata part"
check "lmdb: a part whose database lost records is refused"
rm -rf "$TMP/r-00001-of-00003.lmdb"
"$DATACONV" "$tree" "$TMP/r.lmdb" --resize 16 --shard 1/3 -q
sed -i 's/"entries": [0-9]*/"entries": 99/' "$TMP/r-00001-of-00003.lmdb/libdata.json"
run "$DATACONV" "$tree" "$TMP/r.lmdb" --resize 16 --shard 1/3
expect_rc 1
expect_err "incomplete: the database holds 3 records, libdata.json says 99"

# ---- kill 3 of 8 tasks mid-run, rerun all 8 ----------------------------------------------
big=$TMP/big
# 6,336 photos (hard links), 792 per part. The size matters: a killed task must be caught
# with data in its temporary and before it finishes. The HDF5 writer writes /encoded in whole
# 1 MiB chunks and nothing but the header before the first one, so a task is killable only
# between its first chunk and its end. A 64x64 sample at quality 95 is ~4 KB: the first chunk
# is written after ~260 samples, a third of the part, the same share as before with 2,400 per
# part at 48x48, quality 70 (~1.2 KB: 19,200 photos, three times the work for the same checks;
# the single run and the h5py comparisons below scale with it; decoding for 48 or 64 costs the
# same, both at 1/4 scale). At 48x48, quality 70 and 1,200 per part, the kills landed at
# 75-90 % of the tasks' run: too close to their end.
photo_folder "$big" abcdefgh 33
opts=(--resize 64 --quality 95 --shuffle --seed 11 -j 1)
out=$TMP/k.h5
part() { printf '%s/k-%05d-of-00008.h5' "$TMP" "$1"; }
check "8 tasks at once; tasks 1, 4 and 6 are killed while converting"
pids=()
for k in 0 1 2 3 4 5 6 7; do
    "$DATACONV" "$big" "$out" "${opts[@]}" --shard $k/8 >"$TMP/log1-$k" 2>&1 &
    pids[k]=$!
done
# each is killed as soon as its temporary holds some samples (all three watched at once, so
# that waiting for one gives the others no time to finish; at most 30 s)
pending=(1 4 6)
for _ in $(seq 1 600); do
    left=()
    for k in "${pending[@]}"; do
        t=$(compgen -G "$(part $k).tmp-${pids[k]}-*" | head -n 1 || true)
        if [ -n "$t" ] && [ "$(stat -c %s "$t" 2>/dev/null || echo 0)" -gt 65536 ]; then
            kill -9 "${pids[k]}"
        else
            left+=("$k")
        fi
    done
    pending=("${left[@]}")
    [ "${#pending[@]}" -gt 0 ] || break
    sleep 0.05
done
for k in "${pending[@]}"; do kill -9 "${pids[k]}"; done
for k in 0 1 2 3 4 5 6 7; do wait "${pids[k]}" || true; done
for k in 1 4 6; do
    [ ! -e "$(part $k)" ] || fail "task $k finished before it was killed (input too small?)"
    [ -n "$(compgen -G "$(part $k).tmp-${pids[k]}-*")" ] || fail "task $k left no temporary"
done
for k in 0 2 3 5 7; do
    [ -f "$(part $k)" ] || { cat "$TMP/log1-$k"; fail "task $k did not finish"; }
done

check "rerunning all 8: exactly the 3 killed parts are converted again"
for k in 0 1 2 3 4 5 6 7; do
    "$DATACONV" "$big" "$out" "${opts[@]}" --shard $k/8 >"$TMP/log2-$k" 2>&1 &
    pids[k]=$!
done
for k in 0 1 2 3 4 5 6 7; do wait "${pids[k]}" || { cat "$TMP/log2-$k"; fail "rerun of $k failed"; }; done
converted=$(grep -l "^dataconv: converted" "$TMP"/log2-* | sed 's/.*log2-//' | sort | tr '\n' ' ')
skipped=$(grep -l "already complete, skipped" "$TMP"/log2-* | sed 's/.*log2-//' | sort | tr '\n' ' ')
[ "$converted" = "1 4 6 " ] || fail "converted again: '$converted', expected '1 4 6 '"
[ "$skipped" = "0 2 3 5 7 " ] || fail "skipped: '$skipped', expected '0 2 3 5 7 '"
grep -q "removed .*k-00004-of-00008.h5.tmp-" "$TMP/log2-4" || { cat "$TMP/log2-4"; fail "the killed task's temporary was not removed"; }
[ -z "$(compgen -G "$TMP/k-*.tmp-*")" ] || fail "temporaries left: $(compgen -G "$TMP/k-*.tmp-*")"

check "the resumed parts equal an uninterrupted single run, sample by sample (h5py)"
"$DATACONV" "$big" "$TMP/single.h5" "${opts[@]}" -q
mapfile -t parts < <(for k in 0 1 2 3 4 5 6 7; do part $k; echo; done | grep .)
"$PYTHON" "$checker" h5 "$TMP/single.h5" "${parts[@]}"
if nm -D --defined-only "$LIBDATA_LIBRARY" | grep -qw ld_merge; then
    check "merged: equals the single run (h5py)"
    "$DATACONV" merge "$TMP/merged.h5" "${parts[@]}" -q
    "$PYTHON" "$SRC/tests/python/shard_merged_equal.py" h5 "$TMP/single.h5" "$TMP/merged.h5"
else
    echo "note: this dataconv has no merge command yet: the merged check is left out"
fi
echo "shard_resume: all checks passed"
