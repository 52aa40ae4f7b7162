#!/usr/bin/env bash
# Corrupted and truncated datasets given to `dataconv info` and to the reader (`dataconv
# bench`): an error exit with a message or a clean read, never a crash (exit >= 128) or a
# hang. HDF5 (raw, deflate, encoded) and LMDB (raw, encoded) files are damaged by truncation
# at many offsets, by overwriting random bytes and by zeroing 4 KiB blocks (seeded, so each
# run tries the same inputs). Then a file truncated by another process WHILE the reader
# streams it: HDF5 (read with pread) must end in an error message; LMDB (mapped whole by
# liblmdb) is reported, not required (see the note printed).
# Truncated LMDB databases are in hardening_lmdb_truncated.sh (known failure).
set -euo pipefail
: "${DATACONV:?set DATACONV to the dataconv binary}"
: "${LD_TEST_DATA:?set LD_TEST_DATA to the fixtures folder (tests/data/make_fixtures.py)}"
PYTHON=${PYTHON:-/usr/bin/python3}
SRC=${SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/dataconv-hard.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
check() { echo "check: $*"; }
tried=0 errors=0 clean=0 upstream=0
KEEP=${HARDENING_KEEP:-$TMP/upstream}   # inputs that crashed inside libhdf5/liblmdb
mkdir -p "$KEEP"

# where_crashed CMD...: re-runs a crashing command under gdb and prints "upstream LIB" when the
# innermost frame outside libc is in libhdf5 or liblmdb, else "libdata FRAME"
# (i386: abort() enters the kernel through __kernel_vsyscall, the innermost frame there; and gdb
# cannot unwind out of libc's SSE memcpy without libc's debug info: frame #1 is then a bogus
# "?? ()" outside every library. In that case the caller is the first word on the stack that is
# a return address into a shared library's code: that library decides.)
# Under an emulator (LIBDATA_EMULATOR, scripts/ci_32bit.sh), gdb would debug qemu: the crash is
# read from the core file that qemu-user writes for the program instead.
where_crashed() {
    command -v gdb >/dev/null || { echo "unknown (no gdb)"; return; }
    if [ -n "${LIBDATA_EMULATOR:-}" ]; then
        local cores=$TMP/cores core
        rm -rf "$cores"
        mkdir -p "$cores"
        (cd "$cores" && ulimit -c unlimited && timeout -s KILL 120 "$@") >/dev/null 2>&1 || true
        core=$(find "$cores" -name '*.core' | head -1)
        [ -n "$core" ] || { echo "unknown (no core file from $LIBDATA_EMULATOR)"; return; }
        gdb -batch -ex bt -ex "info sharedlibrary" -ex 'x/64xw $sp' "$1" "$core" 2>/dev/null \
            >"$TMP/gdb.txt" || true
        rm -rf "$cores"
    else
        timeout 120 gdb -batch -ex "handle SIGPIPE nostop noprint" -ex run -ex bt \
            -ex "info sharedlibrary" -ex 'x/64xw $sp' --args "$@" 2>/dev/null >"$TMP/gdb.txt" || true
    fi
    local top
    # (under qemu-user, system calls go through the i386 loader's int 0x80 stub: an abort()
    # shows its innermost frame in ld-linux.so.2, or in no library at all)
    local noise='libc\.so|/sysdeps/|nptl/|stdlib/abort|raise|__GI_|__assert|__memcpy|__memmove|__strlen|__kernel_vsyscall'
    [ -z "${LIBDATA_EMULATOR:-}" ] || noise="$noise|ld-linux|^#[0-9]+ +0x[0-9a-f]+ in \?\? \(\)\$"
    top=$(grep -E '^#[0-9]+ ' "$TMP/gdb.txt" | grep -Ev "$noise" | head -1)
    # (under the emulator the unwound frames past libc are "?? ()" and filtered out above:
    # nothing is left, and the stack words decide as well)
    if { [[ $top =~ ^#1\ +0x[0-9a-f]+\ in\ \?\?\ \(\)$ ]] && grep -q '^#0 .*libc\.so' "$TMP/gdb.txt"; } ||
        { [ -n "${LIBDATA_EMULATOR:-}" ] && [ -z "$top" ]; }; then
        top=$("$PYTHON" - "$TMP/gdb.txt" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
libs = [(int(a, 16), int(b, 16), name) for a, b, name in
        re.findall(r"^(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+\S+(?: \(\*\))?\s+(/\S+)$", text, re.M)]
for w in re.findall(r"0x[0-9a-f]{8}\b", "".join(l.split(":", 1)[1] for l in text.splitlines()
                                                if re.match(r"^0x[0-9a-f]+:\s", l))):
    hit = [n for a, b, n in libs if a <= int(w, 16) < b and "libc.so" not in n]
    if hit:
        print(f"#1 {w} (return address on the stack) from {hit[0]}")
        break
PY
)
    fi
    echo "$top" | awk '/libhdf5/ {print "upstream libhdf5: " $0; next}
                       /liblmdb/ {print "upstream liblmdb: " $0; next}
                       {print "libdata " $0}'
}

# where_asan FILE: the same verdict from a sanitizer report (under ASan the process exits 1 with
# the report instead of crashing, so gdb sees no crash): the innermost frame of the first
# report's stack that is not the sanitizer's own interceptor
where_asan() {
    sed -n '/ERROR: AddressSanitizer\|runtime error:/,$p' "$1" | grep -E '^ *#[0-9]+ ' |
        grep -Ev '__interceptor_|libsanitizer|libasan|libubsan' | head -1 |
        awk '/libhdf5/ {print "upstream libhdf5: " $0; next}
             /liblmdb/ {print "upstream liblmdb: " $0; next}
             {print "libdata " $0}'
}

# liblmdb_shared: dataconv loads liblmdb as a shared library (not an LMDB built into
# libdata, nor a wrapper script that ldd cannot read). Then liblmdb's own assertion message
# ("mdb.c:LINE: Assertion 'EXPR' failed in FUNC()", printed right before its abort()) with
# exit 134 is an abort inside liblmdb, what gdb would show (frame #4 in liblmdb.so, under
# abort), without re-running the command under gdb (~0.7 s of CPU each; 8 of the 11 crashes).
liblmdb_shared=0
deps=$("$SRC/tests/cli/lib/ldd.sh" "$DATACONV" 2>/dev/null || true)
[[ $deps == *liblmdb.so* ]] && liblmdb_shared=1
lmdb_assert=$'(^|\n)(mdb\\.c:[0-9]+: Assertion [^\n]* failed in [A-Za-z0-9_]+\\(\\))'

# try LABEL CMD... (the damaged input is $CUR): must exit < 128 within 60 s; a nonzero exit must come with a message.
# A crash whose innermost frame is inside libhdf5/liblmdb (a bug of that library on a
# malformed file, e.g. HDF5 1.10.8 trusting global-heap object sizes) is counted and its
# input kept in $KEEP; a crash anywhere else fails the test. (Bash builtins where a command
# ran per try before: there are ~330 tries.)
try() {
    local label=$1
    shift
    set +e
    timeout -s KILL 60 "$@" >"$TMP/out" 2>"$TMP/err"
    local rc=$?
    set -e
    tried=$((tried + 1))
    [ "$rc" -ne 137 ] || fail "$label: hang (killed after 60 s): $*"
    # under ASan/UBSan (build-asan) a crash or memory error exits 1 with a report
    local sanitized=0 err=
    IFS= read -r -d '' err <"$TMP/err" || true
    case $err in
    *"ERROR: AddressSanitizer"* | *"ERROR: LeakSanitizer"* | *"runtime error:"* | \
        *"WARNING: ThreadSanitizer"* | *"ERROR: ThreadSanitizer"*) rc=200 sanitized=1 ;;
    esac
    if [ "$rc" -ge 128 ]; then
        local where
        if [ "$sanitized" = 1 ]; then
            where=$(where_asan "$TMP/err" || true)
        elif [ "$rc" = 134 ] && [ "$liblmdb_shared" = 1 ] &&
            [[ $err =~ $lmdb_assert ]]; then
            where="upstream liblmdb: its assertion ${BASH_REMATCH[2]}"
        else
            where=$(where_crashed "$@" || true)
        fi
        case "$where" in
        upstream*)
            upstream=$((upstream + 1))
            local keep=${label//\//_}
            cp -r "$CUR" "$KEEP/${keep// /_}"
            echo "  upstream crash (exit $rc) on $label: $where"
            return ;;
        esac
        cat "$TMP/err" >&2
        fail "$label: crash, exit $rc, in $where: $*"
    fi
    if [ "$rc" -ne 0 ]; then
        [ -s "$TMP/err" ] || fail "$label: exit $rc without a message: $*"
        errors=$((errors + 1))
    else
        clean=$((clean + 1))
    fi
}

# variants ORIG OUTDIR KINDS: damaged copies of ORIG, the dataset (HDF5 file or LMDB
# directory, whose data.mdb is damaged and the other files copied), as OUTDIR/NAME.h5 or
# OUTDIR/NAME.lmdb, ready to read in place (no copy per try); prints their number
variants() {
    "$PYTHON" - "$1" "$2" "$3" <<'PY'
import os, random, shutil, sys
orig, outdir, kinds = sys.argv[1], sys.argv[2], sys.argv[3]
lmdb = os.path.isdir(orig)
data = open(os.path.join(orig, "data.mdb") if lmdb else orig, "rb").read()
n = len(data)
os.makedirs(outdir, exist_ok=True)
rng = random.Random(n)
out = []
if "t" in kinds:
    cuts = sorted(set([0, 1, 8, 100, 512, 2048, 4096, 8192] +
                      [n * k // 8 for k in range(1, 8)] + [n - 4096, n - 1]))
    for c in cuts:
        if 0 <= c < n:
            out.append(("trunc_%d" % c, data[:c]))
if "f" in kinds:
    for k in range(12):
        b = bytearray(data)
        for _ in range(16):
            b[rng.randrange(n)] = rng.randrange(256)
        out.append(("flip_%02d" % k, bytes(b)))
if "z" in kinds:
    for k in range(0, n, max(4096, n // 12 // 4096 * 4096)):
        b = bytearray(data)
        b[k:k + 4096] = bytes(min(4096, n - k))
        out.append(("zero_%d" % k, bytes(b)))
for name, d in out:
    if lmdb:
        shutil.copytree(orig, os.path.join(outdir, name + ".lmdb"))
        path = os.path.join(outdir, name + ".lmdb", "data.mdb")
    else:
        path = os.path.join(outdir, name + ".h5")
    with open(path, "wb") as f:
        f.write(d)
print(len(out))
PY
}

tree=$LD_TEST_DATA/tree
"$DATACONV" "$tree" "$TMP/raw.h5" --resize 32 -q
"$DATACONV" "$tree" "$TMP/deflate.h5" --resize 32 --deflate 4 -q
"$DATACONV" "$tree" "$TMP/enc.h5" --resize 32 --quality 80 -q
"$DATACONV" "$tree" "$TMP/raw.lmdb" --resize 32 -q
"$DATACONV" "$tree" "$TMP/enc.lmdb" --resize 32 --encoded -q

# sweep DS KINDS WHAT: every damaged variant of $TMP/DS (variants' KINDS) through info and bench
sweep() {
    local ds=$1 ext=${1##*.} n v name
    check "$ds: $3 -> info and bench never crash"
    n=$(variants "$TMP/$ds" "$TMP/v-$ds" "$2")
    for v in "$TMP/v-$ds"/*."$ext"; do
        CUR=$v
        name=${v##*/}
        try "info $ds/${name%."$ext"}" "$DATACONV" info "$v"
        try "bench $ds/${name%."$ext"}" "$DATACONV" bench "$v" -q -j 2 --batch 4
    done
    echo "  $n variants"
}
for ds in raw.h5 deflate.h5 enc.h5; do
    sweep "$ds" tfz "truncated, bytes overwritten, blocks zeroed"
done
for ds in raw.lmdb enc.lmdb; do
    sweep "$ds" fz "data.mdb bytes overwritten / blocks zeroed"
done
# Every byte of the class_names attribute's message changed in turn (name, type, space and
# the strings' lengths and heap ids). In a file with HDF5 1.6 object headers (no checksums)
# a changed length byte made HDF5 allocate and clear up to 4 GiB per string (info hung past
# 60 s, h5py too); our files carry checksummed 1.8 headers, so each is refused or read.
check "deflate.h5: each byte of the class_names attribute changed -> info answers at once"
"$PYTHON" - "$TMP/deflate.h5" "$TMP/v-attr" <<'PY'
import os, sys
data = open(sys.argv[1], "rb").read()
at = data.find(b"class_names")
assert at > 0, "no class_names attribute in the file"
os.makedirs(sys.argv[2], exist_ok=True)
for k in range(at, min(at + 96, len(data))):
    b = bytearray(data)
    b[k] ^= 0xE5
    open(os.path.join(sys.argv[2], "byte_%d.h5" % k), "wb").write(b)
PY
for v in "$TMP/v-attr"/*.h5; do
    CUR=$v
    name=${v##*/}
    try "info deflate.h5/${name%.h5}" "$DATACONV" info "$v"
done

echo "damaged datasets tried: $tried runs of info/bench: $errors error exits with a message," \
     "$clean clean reads (damage in pixel bytes), 0 hangs, 0 crashes in libdata," \
     "$upstream crashes inside libhdf5/liblmdb (inputs kept in $KEEP)"

# streaming PID FILE: returns once the reader PID is streaming FILE, i.e. has read twice its
# size (/proc/PID/io rchar counts read and pread bytes: two epochs at least, whatever else it
# read), or has ended; within 10 s. Where /proc/PID/io cannot be read: after 1 s, as before.
# (These checks waited a fixed 1 s here, and 2 s for the reader to end.)
streaming() {
    local pid=$1 want io
    want=$((2 * $(stat -c %s "$2")))
    [ -r "/proc/$pid/io" ] || { sleep 1; return; }
    for _ in $(seq 1 200); do
        io=$(cat "/proc/$pid/io" 2>/dev/null) || return 0 # ended
        io=${io#*rchar: }
        [ "${io%%$'\n'*}" -lt "$want" ] || return 0
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.05
    done
}
# ends_within PID SECONDS: true when PID has ended within SECONDS (polled every 0.05 s)
ends_within() {
    local i
    for ((i = 0; i < $2 * 20; i++)); do
        kill -0 "$1" 2>/dev/null || return 0
        sleep 0.05
    done
    ! kill -0 "$1" 2>/dev/null
}

check "HDF5 truncated by another process while the reader streams it -> error message, no crash"
big=$TMP/bigsrc
mkdir -p "$big/a"
for k in 1 2 3 4; do
    for p in "$LD_TEST_DATA"/photos/p*.jpg; do ln "$p" "$big/a/${k}_$(basename "$p")"; done
done
"$DATACONV" "$big" "$TMP/big.h5" --resize 128 -q
set +e
"$DATACONV" bench "$TMP/big.h5" --epochs 100000 -j 2 --batch 8 -q >"$TMP/out" 2>"$TMP/err" &
pid=$!
streaming "$pid" "$TMP/big.h5"
truncate -s 200000 "$TMP/big.h5"
ends_within "$pid" 2 || { kill "$pid"; wait "$pid"; fail "bench kept running after the file was truncated"; }
wait "$pid"
rc=$?
set -e
echo "  exit $rc: $(head -c 300 "$TMP/err")"
[ "$rc" -lt 128 ] || fail "the reader crashed (exit $rc) when its HDF5 file was truncated"
[ "$rc" -ne 0 ] && [ -s "$TMP/err" ] || fail "no error after truncation (exit $rc)"

check "LMDB truncated while being read -> error exit, no crash"
# liblmdb maps the whole file, and a page past a new end is SIGBUS on first touch. The reader
# walks LMDB's tree only at open (the record index); every read after it is a pread, so a
# database shrunk underneath is a short read and an error, as for HDF5 above. (When this was
# the lookup through the map, the reader died of SIGBUS here: exit 135.)
"$DATACONV" "$big" "$TMP/big.lmdb" --resize 128 -q
set +e
"$DATACONV" bench "$TMP/big.lmdb" --epochs 100000 -j 2 --batch 8 -q >"$TMP/out" 2>"$TMP/err" &
pid=$!
streaming "$pid" "$TMP/big.lmdb/data.mdb"
truncate -s 200000 "$TMP/big.lmdb/data.mdb"
ends_within "$pid" 2 || { kill "$pid"; wait "$pid"; fail "bench kept running after the database was truncated"; }
wait "$pid"
rc=$?
set -e
echo "  exit $rc: $(head -c 300 "$TMP/err")"
[ "$rc" -lt 128 ] || fail "the reader crashed (exit $rc) when its LMDB database was truncated"
# The record is named by its key, or by its number when the file is shorter than at open
# (its key is then not looked up: the tree page could lie past the new end, a SIGBUS).
[ "$rc" -ne 0 ] && grep -q -E "(key '.*|record [0-9]+: .*)truncated" "$TMP/err" ||
    fail "no error naming the record and the truncation (exit $rc)"
grep -q "reading sample 0)" "$TMP/err" && fail "the error names the run's first sample, not the record that failed"
echo "hardening_corrupt: all checks passed"
