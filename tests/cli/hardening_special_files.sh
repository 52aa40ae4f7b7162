#!/usr/bin/env bash
# Things that are not datasets given to `dataconv info` and to the reader (`dataconv bench`):
# an empty file, text, a JPEG, a directory without data.mdb, a dangling symlink, a missing
# path, /dev/null and a FIFO. Each must end quickly with an error exit and a message.
#
# Regression: `dataconv bench FIFO` used to block forever in open() at ld__h5_store_open (plain
# O_RDONLY on a FIFO waits for a writer; SIGTERM did not help); fixed in 6812ed3.
set -euo pipefail
: "${DATACONV:?set DATACONV to the dataconv binary}"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/dataconv-hard.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
status=0
fail() { echo "FAIL: $*" >&2; status=1; }
: > "$TMP/empty.h5"
echo "hello" > "$TMP/text.h5"
printf '\xff\xd8\xff\xe0 not really' > "$TMP/photo.jpg"
mkdir "$TMP/dir.lmdb"
ln -s "$TMP/nowhere" "$TMP/dangling.h5"
mkfifo "$TMP/fifo.h5"
tried=0
for f in "$TMP/empty.h5" "$TMP/text.h5" "$TMP/photo.jpg" "$TMP/dir.lmdb" "$TMP/dangling.h5" \
         "$TMP/missing.h5" /dev/null "$TMP/fifo.h5"; do
    for cmd in info bench; do
        set +e
        if [ $cmd = info ]; then
            timeout -s KILL 20 "$DATACONV" info "$f" >/dev/null 2>"$TMP/err"
        else
            timeout -s KILL 20 "$DATACONV" bench "$f" -q >/dev/null 2>"$TMP/err"
        fi
        rc=$?
        set -e
        tried=$((tried + 1))
        echo "$cmd $(basename "$f"): exit $rc: $(head -c 160 "$TMP/err")"
        if [ "$rc" -eq 137 ]; then fail "$cmd $f: hang (killed after 20 s)"
        elif [ "$rc" -ge 128 ]; then fail "$cmd $f: crash (exit $rc)"
        elif [ "$rc" -eq 0 ]; then fail "$cmd $f: exit 0 on something that is not a dataset"
        elif [ ! -s "$TMP/err" ]; then fail "$cmd $f: exit $rc without a message"
        fi
    done
done
[ "$status" = 0 ] && echo "hardening_special_files: all $tried checks passed"
exit $status
