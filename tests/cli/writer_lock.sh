#!/usr/bin/env bash
# A running HDF5 conversion holds its temporary file locked (flock, as HDF5's own sec2 driver
# does), so that the next run's sweep of stale temporaries leaves it alone even when the pid in
# its name means nothing (another host of a network file system). libdata writes HDF5 through
# its own file driver (store/h5_vfd.c), which must keep taking that lock. The same lock tells a
# second conversion into the same output that another one is writing it (refused, naming the
# process: issue 26 item 6), and a reader of the temporary why it cannot open it.
source "$(dirname "$0")/lib/common.sh"
command -v flock >/dev/null || { echo "SKIP: no flock(1)"; exit 77; }
cd "$TMP"
photo_folder src ab 60
"$DATACONV" src out.h5 --resize 256 -j1 -q 2>err &
pid=$!
tmp=
for _ in $(seq 1 200); do
    tmp=$(ls out.h5.tmp-* 2>/dev/null | head -1 || true)
    [ -n "$tmp" ] && break
    sleep 0.05
done
[ -n "$tmp" ] || { kill "$pid" 2>/dev/null || true; fail "no temporary file appeared"; }
check "the temporary $tmp of a live conversion is locked"
if flock -n -x "$tmp" true; then
    kill "$pid" 2>/dev/null || true
    fail "$tmp is not locked while dataconv writes it"
fi
check "a second conversion into the same output is refused while the first runs, naming it"
run "$DATACONV" src out.h5 --resize 64 -q
expect_rc 1
expect_err "out.h5 is being written by another conversion (process $pid, into $tmp)"
[ -z "$(compgen -G "out.h5.tmp-*" | grep -v "^$tmp\$")" ] || fail "the refused run left a temporary"
check "info and the reader on the temporary say that it is being written"
for cmd in info bench; do
    run "$DATACONV" "$cmd" "$tmp"
    expect_rc 1
    expect_err "$tmp: a conversion (process $pid) is still writing this temporary"
done
kill -KILL "$pid"
wait "$pid" 2>/dev/null || true
check "after SIGKILL the lock is gone"
flock -n -x "$tmp" true || fail "$tmp still locked after its writer died"
check "after it, the same output converts (the killed run's temporary swept)"
run "$DATACONV" src out.h5 --resize 32 -q
expect_rc 0
[ -z "$(compgen -G "out.h5.tmp-*")" ] || fail "temporaries left: $(compgen -G "out.h5.tmp-*")"

check "LMDB: a second conversion into a database being written is refused"
"$DATACONV" src out.lmdb --resize 384 --quality 90 -j1 -q 2>err &
pid=$!
for _ in $(seq 1 200); do
    tmp=$(ls -d out.lmdb.tmp-* 2>/dev/null | head -1 || true)
    [ -n "$tmp" ] && [ -e "$tmp/lock.mdb" ] && break
    sleep 0.05
done
[ -n "$tmp" ] || { kill "$pid" 2>/dev/null || true; fail "no LMDB temporary appeared"; }
run "$DATACONV" src out.lmdb --resize 64 -q
kill -KILL "$pid"
wait "$pid" 2>/dev/null || true
expect_rc 1
expect_err "out.lmdb is being written by another conversion (process $pid, into $tmp)"
echo "writer_lock: all checks passed"
