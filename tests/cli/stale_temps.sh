#!/usr/bin/env bash
# What SIGKILL leaves behind is cleaned up by the next run for the same output: the killed
# run's "<out>.tmp-<pid>-..." (an HDF5 file or an LMDB directory) is removed and named on
# stderr. A temporary whose process is alive is never touched.
source "$(dirname "$0")/lib/common.sh"

big=$TMP/big
photo_folder "$big" ab 30
small=$TMP/small
mkdir -p "$small/x"
cp "$LD_TEST_DATA"/photos/p0[0-3].jpg "$small/x/"

for ext in h5 lmdb; do
    out=$TMP/out.$ext
    check "$ext: SIGKILL mid-run leaves a temporary beside $out"
    "$DATACONV" "$big" "$out" --resize 200 -j 1 -q 2>/dev/null &
    pid=$!
    for _ in $(seq 1 200); do # until it has written something (at most 20 s)
        t=$(compgen -G "$out.tmp-$pid-*" | head -n 1 || true)
        [ -n "$t" ] && [ "$(du -sk "$t" | cut -f1)" -gt 64 ] && break
        sleep 0.1
    done
    kill -9 "$pid"
    wait "$pid" 2>/dev/null || true
    stale=$(compgen -G "$out.tmp-$pid-*" | head -n 1 || true)
    [ -n "$stale" ] || fail "$ext: no temporary of the killed run (pid $pid) to clean up"
    [ ! -e "$out" ] || fail "$ext: $out exists after the kill"

    # a temporary of a live process (this shell) must survive
    alive="$out.tmp-$$-abc"
    echo keep > "$alive"

    check "$ext: the next run removes it, says so, and writes the output"
    run "$DATACONV" "$small" "$out" --resize 32
    expect_rc 0
    [ ! -e "$stale" ] || fail "$ext: $stale is still there"
    expect_err "removed $stale"
    expect_err "interrupted run (process $pid)"
    [ "$(cat "$alive")" = keep ] || fail "$ext: the live process's temporary was touched"
    ! grep -q "$alive" "$TMP/err" || { show; fail "$ext: the live temporary was mentioned"; }
    rm -f "$alive"
    left=$(compgen -G "$out.tmp-*" | wc -l || true)
    [ "$left" -eq 0 ] || fail "$ext: $left temporaries left"
done
echo "stale_temps: all checks passed"
