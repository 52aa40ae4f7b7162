# Shared set-up of the CLI test scripts (sourced; not a test itself): environment checks, a
# temporary folder removed on exit, and small assertion helpers (lib/helpers.sh).
# shellcheck shell=bash
set -euo pipefail
: "${DATACONV:?set DATACONV to the dataconv binary}"
: "${LD_TEST_DATA:?set LD_TEST_DATA to the fixtures folder (tests/data/make_fixtures.py)}"
PYTHON=${PYTHON:-/usr/bin/python3}
source "$(dirname "${BASH_SOURCE[0]}")/helpers.sh" # SRC, TMP, fail, check, run, expect_*
# asan_build: true when dataconv or libdata links AddressSanitizer, which reserves terabytes of
# shadow memory (it cannot start under `ulimit -v`) and which python cannot load. ldd's output
# is captured, not piped into grep: under pipefail, a grep that exits first fails the pipe.
asan_build() {
    local deps
    deps=$("$SRC/tests/cli/lib/ldd.sh" "$DATACONV" "${LIBDATA_LIBRARY:-/dev/null}" 2>/dev/null || true)
    [[ "$deps" == *libasan* ]]
}
# python_loads_libdata: false when libdata is a 32-bit library (scripts/ci_32bit.sh) and
# $PYTHON a 64-bit one, which cannot load it (Debian has no co-installable 32-bit python).
python_loads_libdata() {
    local lib_bits py_bits
    lib_bits=$(od -An -j4 -N1 -tu1 "${LIBDATA_LIBRARY:-/dev/null}" 2>/dev/null | tr -d ' ')
    py_bits=$("$PYTHON" -c 'import struct; print(struct.calcsize("P") * 8)')
    ! { [ "$lib_bits" = 1 ] && [ "$py_bits" = 64 ]; }
}
# libpy ARGS...: python (from $TMP, with the bindings) on a step that loads libdata, unless this
# python cannot load this build (a 32-bit library, an AddressSanitizer build): then it says so.
libpy() {
    if python_loads_libdata && ! asan_build; then
        (cd "$TMP" && PYTHONPATH="$SRC/bindings/python" "$PYTHON" "$@")
    else
        echo "  (skipped: python cannot load this libdata build)"
    fi
}
# emulated: true when the programs under test run in an emulator (scripts/ci_32bit.sh sets
# LIBDATA_EMULATOR=qemu-i386 where the kernel refuses i386 programs). Their peak RSS is then the
# emulator's, which grows with the translated code and with a descriptor per page the program
# maps, and qemu-user 7.2 mishandles a few things natively fine (LIBDATA_EMULATOR_SIGNALS=broken:
# see tests/emulator/signal_join.c).
emulated() { [ -n "${LIBDATA_EMULATOR:-}" ]; }
# drop_cache FILE: FILE's pages out of the page cache (written back first: DONTNEED leaves dirty
# pages, a file just made, cached); other files' pages stay.
drop_cache() {
    "$PYTHON" -c "
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.fsync(fd)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
os.close(fd)" "$1"
}
# photo_folder DIR CLASSES COPIES: a class folder per letter of CLASSES (e.g. "abcd"), each
# holding COPIES hard links (copies where links fail) of every fixture photo: a real-photo
# input as large as a test needs, made in a moment without using disk space.
photo_folder() {
    "$PYTHON" - "$LD_TEST_DATA/photos" "$1" "$2" "$3" <<'PY'
import glob, os, shutil, sys
src, out, classes, copies = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
photos = sorted(glob.glob(f"{src}/p*.jpg"))
for c in classes:
    os.makedirs(f"{out}/{c}", exist_ok=True)
    for k in range(copies):
        for p in photos:
            dst = f"{out}/{c}/{k:03d}_{os.path.basename(p)}"
            try:
                os.link(p, dst)
            except OSError:
                shutil.copyfile(p, dst)
PY
}
