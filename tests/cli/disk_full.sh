#!/usr/bin/env bash
# A full disk and the file size limit are said in words a user can act on (issue 12, item 17),
# for HDF5 (whose own text was "... bytes actually written = 18446744073709551615 ...") and
# LMDB (which said "Input/output error"): exit 1, the output named, nothing left behind.
#  - file size limit: `ulimit -f` (any user);
#  - no space left: a 1 MiB tmpfs, mounted in a private mount namespace (unshare -m, needs
#    root or user namespaces); skipped with the reason when that is not permitted.
source "$(dirname "$0")/lib/common.sh"
src=$TMP/src
photo_folder "$src" ab 2 # 96 photos: 96 x 3 x 128 x 128 = 4.7 MB raw

nothing_left() { # OUT
    [ ! -e "$1" ] || fail "$1 left behind"
    [ -z "$(compgen -G "$1.tmp-*")" ] || fail "temporaries of $1 left: $(compgen -G "$1.tmp-*")"
}

for ext in h5 lmdb; do
    check "ulimit -f, $ext: 'file size limit exceeded while writing OUT'"
    out=$TMP/big.$ext
    run bash -c 'trap "" XFSZ; ulimit -f 1024; exec "$0" "$1" "$2" --resize 128 -q' \
        "$DATACONV" "$src" "$out"
    expect_rc 1
    expect_err "file size limit exceeded while writing $out ([0-9]* bytes written; the limit"
    grep -q "18446744073709551615\|Input/output error\|errno = " "$TMP/err" && { show; fail "raw text"; }
    [ "$(wc -l < "$TMP/err")" -le 2 ] || { show; fail "more than two lines"; }
    nothing_left "$out"
done

# The write that fails is one of the last, while the file is finished (its last chunk and the
# metadata flushed): HDF5 kept the failure in its state, its close failed again, and the
# process died of SIGSEGV at exit (issue 26 item 1). The limit is one KiB short of the file.
check "ulimit -f just short of the file: it fails at finish, exit 1, no crash at exit"
for args in "" "--shard 0/2"; do
    mkdir "$TMP/whole"
    # shellcheck disable=SC2086 # args: words
    "$DATACONV" "$src" "$TMP/whole/w.h5" --resize 32 -q $args
    kib=$((($(stat -c %s "$TMP"/whole/w*.h5) - 1) / 1024))
    rm -r "$TMP/whole"
    out=$TMP/fin.h5
    # shellcheck disable=SC2086
    run bash -c 'trap "" XFSZ; ulimit -f "$0"; exec "$@"' "$kib" "$DATACONV" "$src" "$out" \
        --resize 32 -q $args
    expect_rc 1
    expect_err "file size limit exceeded while writing $TMP/fin"
    nothing_left "$out"
    [ -z "$(compgen -G "$TMP/fin-*")" ] || fail "parts left: $(compgen -G "$TMP/fin-*")"
done
check "ulimit -f: a merge that cannot write its file exits 1, nothing left"
"$DATACONV" "$src" "$TMP/m.h5" --resize 32 -q --shard 0/2
"$DATACONV" "$src" "$TMP/m.h5" --resize 32 -q --shard 1/2
run bash -c 'trap "" XFSZ; ulimit -f 1; exec "$0" merge "$1" -q' "$DATACONV" "$TMP/m.h5"
expect_rc 1
expect_err "file size limit exceeded\|cannot write the merged file"
nothing_left "$TMP/m.h5"

mnt=$TMP/full
mkdir -p "$mnt"
if ! unshare -m --propagation private true 2>/dev/null ||
    ! unshare -m --propagation private mount -t tmpfs -o size=1m tmpfs "$mnt" 2>/dev/null; then
    echo "SKIP: cannot mount a small tmpfs here (needs root or user namespaces): ENOSPC not tested"
    echo "disk_full: file size limit checks passed"
    exit 0
fi
for ext in h5 lmdb; do
    check "1 MiB tmpfs, $ext: 'no space left on device while writing OUT'"
    # the tmpfs lives in the namespace of this one command; the listing shows what it leaves
    run unshare -m --propagation private bash -c \
        'mount -t tmpfs -o size=1m tmpfs "$3" && "$0" "$1" "$3/out.$4" --resize 128 -q;
         rc=$?; ls -A "$3" >&2; exit $rc' "$DATACONV" "$src" unused "$mnt" "$ext"
    expect_rc 1
    expect_err "no space left on device while writing $mnt/out.$ext ([0-9]* bytes written"
    grep -q "18446744073709551615\|Input/output error\|errno = " "$TMP/err" && { show; fail "raw text"; }
    [ "$(wc -l < "$TMP/err")" -le 2 ] || { show; fail "more than two lines (or files left)"; }
done
echo "disk_full: all checks passed"
