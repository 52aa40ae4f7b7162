#!/usr/bin/env bash
# Ctrl-C and kill: SIGINT during a conversion exits 130, SIGTERM 143; nothing under the
# output name, no temporary left, an existing output untouched.
source "$(dirname "$0")/lib/common.sh"
if [ "${LIBDATA_EMULATOR_SIGNALS:-}" = broken ]; then
    echo "skipped: under $LIBDATA_EMULATOR a signal that interrupts the main thread's wait breaks"
    echo "         its pthread_join (tests/emulator/signal_join.c), so a worker outlives the job"
    exit 77
fi

# A folder large enough to take several seconds: the photos hard-linked many times.
big=$TMP/big
photo_folder "$big" abcd 40
n=$(find "$big" -type f | wc -l)
echo "input: $n files"

# interrupt SIGNAL EXPECTED_EXIT OUT
interrupt() {
    local sig=$1 want=$2 out=$3
    set +e
    "$DATACONV" "$big" "$out" --quality 90 --resize 300 -j 1 2>"$TMP/err" &
    local pid=$!
    set -e
    # Wait until the library has created its temporary (the conversion is under way).
    local t=0
    until compgen -G "$out.tmp-*" >/dev/null || [ $t -ge 200 ]; do sleep 0.05; t=$((t + 1)); done
    sleep 0.3
    kill -"$sig" "$pid" 2>/dev/null || true
    set +e
    wait "$pid"
    rc=$?
    set -e
    expect_rc "$want"
    expect_err "nothing was written to $out"
    local left
    left=$(compgen -G "$out.tmp-*" || true)
    [ -z "$left" ] || fail "temporary left behind after SIG$sig: $left"
}

check "SIGINT during a conversion -> exit 130, no file under the output name, no temporary"
interrupt INT 130 "$TMP/out.h5"
[ ! -e "$TMP/out.h5" ] || fail "SIGINT left $TMP/out.h5"

check "SIGTERM -> exit 143, an existing output untouched"
echo "previous" > "$TMP/prev.h5"
interrupt TERM 143 "$TMP/prev.h5"
[ "$(cat "$TMP/prev.h5")" = previous ] || fail "an interrupted run replaced the existing output"

check "SIGINT to an LMDB conversion -> exit 130, no database directory"
interrupt INT 130 "$TMP/out.lmdb"
[ ! -e "$TMP/out.lmdb" ] || fail "SIGINT left $TMP/out.lmdb"
echo "interrupt: all checks passed"
