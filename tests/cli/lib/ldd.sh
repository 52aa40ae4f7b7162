#!/usr/bin/env bash
# ldd FILE...: the shared libraries each program or library loads, also for an i386 file run by
# qemu-i386 through binfmt_misc (scripts/ci_32bit.sh). ldd itself sets LD_TRACE_LOADED_OBJECTS,
# which the emulator's own (64-bit) loader then obeys: it lists qemu's libraries. The i386
# loader's --list option asks the emulated loader instead.
set -uo pipefail
status=0
for f in "$@"; do
    if [ -n "${LIBDATA_EMULATOR:-}" ] && [ -x /lib/ld-linux.so.2 ] &&
        [ "$(od -An -j4 -N1 -tu1 "$f" 2>/dev/null | tr -d ' ')" = 1 ]; then
        /lib/ld-linux.so.2 --list "$f" || status=1
    else
        ldd "$f" || status=1
    fi
done
exit $status
