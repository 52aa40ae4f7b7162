#!/usr/bin/env bash
# LMDB and the word size (issue 15). LMDB files are not portable between 32- and 64-bit
# programs: the reader names the word size it found instead of "not an LMDB database". LMDB maps
# the whole database: a map that does not fit in the address space (a 32-bit process, or
# `ulimit -v`) is a clear error naming the size, never a crash. The map size is the one the
# database records in its meta pages (LMDB maps at least that much), set here by editing them.
source "$(dirname "$0")/lib/common.sh"
bits=$(( $(od -An -j4 -N1 -tu1 "${LIBDATA_LIBRARY:?}" | tr -d ' ') * 32 ))
echo "library: $bits-bit"
# set_map DB MIB: rewrite the map size of both meta pages (after the page header, magic,
# version and address, each the size of the writer's pointer where it is a pointer or size_t)
set_map() {
    "$PYTHON" - "$1/data.mdb" "$2" <<'PY'
import struct, sys
path, mib = sys.argv[1], int(sys.argv[2])
f = open(path, "r+b")
head = f.read(20)
if struct.unpack_from("<I", head, 12)[0] == 0xBEEFC0DE:    # written by a 32-bit program
    off, fmt, size = 24, "<I", min(mib << 20, 2**32 - 4096)
else:
    assert struct.unpack_from("<I", head, 16)[0] == 0xBEEFC0DE
    off, fmt, size = 32, "<Q", mib << 20
for page in (0, 4096):
    f.seek(page + off)
    f.write(struct.pack(fmt, size))
PY
}

"$DATACONV" "$SRC/samples/images" "$TMP/own.lmdb" --resize 8 -q
if [ "$bits" = 32 ]; then
    check "an LMDB written by a 64-bit program (python3-lmdb): refused, the word size named"
    (unset PYTHONPATH; "$PYTHON" -c 'import lmdb, sys
e = lmdb.open(sys.argv[1], map_size=1 << 20)
with e.begin(write=True) as t:
    t.put(b"00000000_a", b"\x08\x01")' "$TMP/other.lmdb")
    check "a 4 GiB map does not fit a 32-bit process: an error naming the size, no crash"
    set_map "$TMP/own.lmdb" 4096
    for cmd in info bench; do
        run "$DATACONV" $cmd "$TMP/own.lmdb"
        expect_rc 1
        expect_err "LMDB maps the whole database (4095 MiB)"
        expect_err "a 32-bit process: about 2.5 GiB at most"
    done
    check "a 2 GiB map opens and reads (the measured limit is about 2.5 GiB on i386)"
    set_map "$TMP/own.lmdb" 2048
    run "$DATACONV" bench "$TMP/own.lmdb" --batch 16 --epochs 1
    expect_rc 0
    # The limit itself (the README's "32-bit systems" table quotes this line): the largest map
    # that opens, in 128 MiB steps. Printed, not checked: it depends on the kernel and libraries.
    largest=2048
    for mib in $(seq 2176 128 4096); do
        set_map "$TMP/own.lmdb" "$mib"
        run "$DATACONV" info "$TMP/own.lmdb"
        [ "$rc" -eq 0 ] || break
        largest=$mib
    done
    echo "note: the largest LMDB map this $bits-bit dataconv opens: $largest MiB ($mib MiB does not)"
else
    check "an LMDB written by a 32-bit program (tests/data/lmdb32): refused, the word size named"
    mkdir "$TMP/other.lmdb"
    cp "$SRC/tests/data/lmdb32/data.mdb" "$TMP/other.lmdb/"
    if asan_build; then
        echo "note: ASan build: the ulimit -v case is skipped (ASan cannot start under ulimit -v)"
    else
        check "under ulimit -v 1 GiB, a database recording a 3 GiB map: an error naming the size, no crash"
        set_map "$TMP/own.lmdb" 3072
        run bash -c 'ulimit -Sv 1048576 && exec "$@"' _ "$DATACONV" bench "$TMP/own.lmdb"
        expect_rc 1
        expect_err "LMDB maps the whole database (3072 MiB)"
        expect_err "raise the limit (ulimit -v)"
    fi
    set_map "$TMP/own.lmdb" 64
    run "$DATACONV" bench "$TMP/own.lmdb" --batch 16 --epochs 1
    expect_rc 0
fi
other=$((96 - bits))
for cmd in info bench; do
    run "$DATACONV" $cmd "$TMP/other.lmdb"
    expect_rc 1
    expect_err "written by a $other-bit program, and this is a $bits-bit one"
    expect_err "not portable between 32- and 64-bit programs"
done
echo "lmdb_word_size: all checks passed"
