#!/usr/bin/env bash
# A running HDF5 conversion holds its temporary file locked (flock, as HDF5's own sec2 driver
# does), so that the next run's sweep of stale temporaries leaves it alone even when the pid in
# its name means nothing (another host of a network file system). libdata writes HDF5 through
# its own file driver (store/h5_vfd.c), which must keep taking that lock.
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
kill -KILL "$pid"
wait "$pid" 2>/dev/null || true
check "after SIGKILL the lock is gone"
flock -n -x "$tmp" true || fail "$tmp still locked after its writer died"
echo "writer_lock: all checks passed"
