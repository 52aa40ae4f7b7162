#!/usr/bin/env bash
# dataconv merge refuses parts that do not make one whole (issue 13, item 2 and the bad cases
# of "done means"): a missing part, a part from another run (other options; another input),
# other class names, a truncated part, duplicate K, N mismatch, a renamed part, a file that is
# not a part, and an output that is one of the parts. Each is exit 3 with a message naming the
# file, and nothing is left under OUT (no file, no temporary). HDF5 and LMDB.
source "$(dirname "$0")/lib/common.sh"

photo_folder "$TMP/src" abc 1
for c in a b c; do find "$TMP/src/$c" -name '*.jpg' | sort | tail -n +5 | xargs rm -f; done
conv() { "$DATACONV" "$@" -q 2>/dev/null || { "$DATACONV" "$@" -q; fail "dataconv $*"; }; }

# nothing_written OUT: no OUT and no temporary of it
nothing_written() {
    [ ! -e "$1" ] || fail "$1 was written by a refused merge"
    if ls "$1".tmp-* >/dev/null 2>&1; then fail "a temporary of $1 was left: $(ls -d "$1".tmp-*)"; fi
}
# refused OUT PATTERN: the last run was refused (exit 3) naming PATTERN, and left nothing
refused() {
    expect_rc 3
    expect_err "$2"
    nothing_written "$1"
}

for ext in h5 lmdb; do
    P=$TMP/$ext
    mkdir -p "$P/good" "$P/other" "$P/mix"
    for k in 0 1 2 3; do conv "$TMP/src" "$P/good/out.$ext" --resize 16 --shard $k/4; done
    g=$P/good/out

    check "$ext: the four good parts merge (the baseline of the cases below)"
    run "$DATACONV" merge "$P/ok.$ext" "$g"-0000{0,1,2,3}-of-00004.$ext
    expect_rc 0
    [ -e "$P/ok.$ext" ] || fail "no merged output"

    check "$ext: a missing part is named by its file name"
    run "$DATACONV" merge "$P/m.$ext" "$g"-0000{0,1,3}-of-00004.$ext
    refused "$P/m.$ext" "out-00002-of-00004.$ext: missing (part 2 of 4"
    # found beside OUT: the same when a part's file is gone
    cp -r "$P/good" "$P/gone"
    rm -rf "$P/gone/out-00001-of-00004.$ext"
    run "$DATACONV" merge "$P/gone/out.$ext"
    refused "$P/gone/out.$ext" "gone/out-00001-of-00004.$ext: missing (part 1 of 4"

    check "$ext: a part made with other options is refused, naming it and the setting"
    conv "$TMP/src" "$P/other/out.$ext" --resize 20x16 --shard 2/4
    run "$DATACONV" merge "$P/m.$ext" "$g"-0000{0,1,3}-of-00004.$ext "$P/other/out-00002-of-00004.$ext"
    refused "$P/m.$ext" "other/out-00002-of-00004.$ext: made with other settings than"
    expect_err "resize_w is 20 here, 16 there"

    check "$ext: a part of another input (same options, same size, another file) is from another run"
    cp -rl "$TMP/src" "$TMP/src2-$ext"
    mv "$TMP/src2-$ext/c/000_p03.jpg" "$TMP/src2-$ext/c/000_p03b.jpg"
    conv "$TMP/src2-$ext" "$P/other/in.$ext" --resize 16 --shard 3/4
    run "$DATACONV" merge "$P/m.$ext" "$g"-0000{0,1,2}-of-00004.$ext "$P/other/in-00003-of-00004.$ext"
    refused "$P/m.$ext" "other/in-00003-of-00004.$ext: a part from another run than"
    expect_err "run_id"

    check "$ext: other class names are refused, naming the part"
    cp -rl "$TMP/src" "$TMP/src3-$ext"
    mv "$TMP/src3-$ext/c" "$TMP/src3-$ext/d"
    conv "$TMP/src3-$ext" "$P/other/cls.$ext" --resize 16 --shard 1/4
    run "$DATACONV" merge "$P/m.$ext" "$g"-0000{0,2,3}-of-00004.$ext "$P/other/cls-00001-of-00004.$ext"
    refused "$P/m.$ext" "other/cls-00001-of-00004.$ext: its class names differ from those of"

    check "$ext: a truncated part is refused, naming it"
    cp -r "$P/good" "$P/trunc"
    if [ $ext = h5 ]; then
        f=$P/trunc/out-00002-of-00004.h5
    else
        f=$P/trunc/out-00002-of-00004.lmdb/data.mdb
    fi
    truncate -s $(( $(stat -c %s "$f") / 2 )) "$f"
    run "$DATACONV" merge "$P/trunc/out.$ext"
    refused "$P/trunc/out.$ext" "trunc/out-00002-of-00004.$ext"
    if [ $ext = h5 ]; then expect_err "not a readable HDF5 file (truncated"; else expect_err "truncated"; fi

    check "$ext: the same K twice is refused, naming both files"
    cp -r "$g-00001-of-00004.$ext" "$P/mix/out-00001-of-00004.$ext"
    run "$DATACONV" merge "$P/m.$ext" "$g"-0000{0,1,2,3}-of-00004.$ext "$P/mix/out-00001-of-00004.$ext"
    refused "$P/m.$ext" "is given twice"
    expect_err "mix/out-00001-of-00004.$ext"
    expect_err "good/out-00001-of-00004.$ext"

    check "$ext: a part of another N is refused (N mismatch), naming it"
    conv "$TMP/src" "$P/other/out.$ext" --resize 16 --shard 2/3
    run "$DATACONV" merge "$P/m.$ext" "$g"-0000{0,1,3}-of-00004.$ext "$P/other/out-00002-of-00003.$ext"
    refused "$P/m.$ext" "other/out-00002-of-00003.$ext: part 2 of 3, but"
    expect_err "N mismatch"

    check "$ext: a renamed part (its name's K/N differ from what it holds) is refused"
    mkdir -p "$P/ren"
    cp -r "$g"-0000{0,1,2}-of-00004.$ext "$P/ren/"
    mv "$P/ren/out-00002-of-00004.$ext" "$P/ren/out-00003-of-00004.$ext"
    run "$DATACONV" merge "$P/ren/out.$ext"
    refused "$P/ren/out.$ext" "ren/out-00003-of-00004.$ext: renamed part: its name says part 3 of 4 but it holds part 2 of 4"
    expect_err "rename it back to $P/ren/out-00002-of-00004.$ext"

    check "$ext: a single run's output is not a part"
    conv "$TMP/src" "$P/other/single.$ext" --resize 16
    run "$DATACONV" merge "$P/m.$ext" "$g"-0000{0,1,3}-of-00004.$ext "$P/other/single.$ext"
    refused "$P/m.$ext" "other/single.$ext: not a part of a sharded conversion"

    check "$ext: info calls the merged dataset merged, and a merged dataset is not a part"
    run "$DATACONV" info "$P/ok.$ext"
    expect_rc 0
    grep -q "^shard: merged from the 4 parts of one run, listing 12 samples" "$TMP/out" ||
        { show; fail "info does not say merged"; }
    ! grep -q "damaged" "$TMP/out" || { show; fail "info calls a merged dataset damaged"; }
    run "$DATACONV" merge "$P/m.$ext" "$g"-0000{0,1,2}-of-00004.$ext "$P/ok.$ext"
    refused "$P/m.$ext" "ok.$ext: a merged"

    check "$ext: an output that is one of the parts is refused before anything is written"
    before=$(find "$g-00001-of-00004.$ext" -type f -exec md5sum {} + | sort)
    run "$DATACONV" merge "$g-00001-of-00004.$ext" "$g"-0000{0,1,2,3}-of-00004.$ext
    expect_rc 3
    expect_err "would replace the part"
    [ "$(find "$g-00001-of-00004.$ext" -type f -exec md5sum {} + | sort)" = "$before" ] ||
        fail "the part was changed"
done

check "a part whose mapping name would hold '%' (an HDF5 VDS pattern) is refused; beside OUT it is fine"
mkdir -p "$TMP/p%b"
cp "$TMP/h5/good"/out-0000?-of-00004.h5 "$TMP/p%b/"
run "$DATACONV" merge "$TMP/pct.h5" "$TMP/p%b"/out-0000?-of-00004.h5
refused "$TMP/pct.h5" "take '%' in a file name as a pattern"
run "$DATACONV" merge "$TMP/p%b/out.h5"
expect_rc 0

check "usage: no OUT, an unknown option, a pattern that matches nothing"
run "$DATACONV" merge
expect_rc 2
expect_err "missing OUT"
run "$DATACONV" merge "$TMP/x.h5" --bogus
expect_rc 2
expect_err "unknown option '--bogus'"
run "$DATACONV" merge "$TMP/x.h5" "$TMP/nothing-*-of-00004.h5"
expect_rc 3
expect_err "no file matches this pattern"
run "$DATACONV" merge "$TMP/none.h5"
expect_rc 3
expect_err "none.h5: no parts found beside it"
run "$DATACONV" merge --help
expect_rc 0
expect_out "Usage: dataconv merge OUT"
echo "ok"
