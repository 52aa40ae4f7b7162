#!/usr/bin/env bash
# Output larger than the space available, simulated with RLIMIT_FSIZE (`ulimit -f`): a clear
# error, exit 1, nothing under the output name and no temporary left, for HDF5 and LMDB.
#
# Known failures when this test was written (reported to the lead, 2026-12-02):
#  1. dataconv does not ignore SIGXFSZ, so the kernel kills it (exit 153) at the first write
#     past the limit instead of write() failing with EFBIG. Fix: signal(SIGXFSZ, SIG_IGN) in
#     the CLI (a library must not touch signal dispositions).
#  2. HDF5 1.10.8: after a write failure, H5Fclose fails and HDF5's own atexit handler
#     (H5_term_library -> H5F__close_cb) then segfaults (exit 139), even though libdata's
#     error path ran and removed the temporary. Reproduced with plain HDF5 calls, no libdata;
#     avoided by H5dont_atexit() before HDF5 initializes, or by the CLI leaving with _exit()
#     after a failed conversion. The second half below checks this with SIGXFSZ ignored.
set -euo pipefail
: "${DATACONV:?set DATACONV to the dataconv binary}"
: "${LD_TEST_DATA:?set LD_TEST_DATA to the fixtures folder (tests/data/make_fixtures.py)}"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/dataconv-hard.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; status=1; }
status=0
src=$TMP/src
mkdir -p "$src/a" "$src/b"
for k in 1 2 3; do
    for p in "$LD_TEST_DATA"/photos/p*.jpg; do
        ln "$p" "$src/a/${k}_$(basename "$p")" 2>/dev/null || cp "$p" "$src/a/${k}_$(basename "$p")"
    done
done
# 72 images x 3 x 128 x 128 = 3.5 MB of pixels: over a 2 MiB (ulimit -f 2048) limit
for sig in default ignored; do
    for ext in h5 lmdb; do
        out=$TMP/limited.$ext
        rm -rf "$out" "$out".tmp-*
        set +e
        if [ "$sig" = ignored ]; then
            (trap '' XFSZ; ulimit -f 2048; ulimit -c 0; exec "$DATACONV" "$src" "$out" --resize 128 -q) \
                2>"$TMP/err"
        else
            (ulimit -f 2048; ulimit -c 0; exec "$DATACONV" "$src" "$out" --resize 128 -q) 2>"$TMP/err"
        fi
        rc=$?
        set -e
        if grep -Eq "ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:|WARNING: ThreadSanitizer|ERROR: ThreadSanitizer" "$TMP/err"; then rc="$rc+sanitizer-report"; fi
        msg=$(tr '\n' ' ' < "$TMP/err" | head -c 300)
        echo "SIGXFSZ $sig, $ext: exit $rc: $msg"
        [ "$rc" = 1 ] || fail "SIGXFSZ $sig, $ext: exit $rc, want 1"
        [ -s "$TMP/err" ] || fail "SIGXFSZ $sig, $ext: no message"
        [ ! -e "$out" ] || fail "SIGXFSZ $sig, $ext: $out left behind"
        left=$(compgen -G "$out.tmp-*" || true)
        [ -z "$left" ] || fail "SIGXFSZ $sig, $ext: temporaries left: $left"
    done
done
[ "$status" = 0 ] && echo "hardening_fsize: all checks passed"
exit $status
