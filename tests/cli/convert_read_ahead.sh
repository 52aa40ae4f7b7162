#!/usr/bin/env bash
# Who reads the input files (convert.c: read_input, run.worker_reads). At -j1 the calling
# thread reads them a window ahead of the one decoding worker, which only decodes and resizes;
# at -j2 and more each worker reads its own, so that the calling thread, the part of the run
# that does not scale with -j, only writes (issue 30). Checked with strace: at -j1 every input
# image is opened by the main thread (the process' own id) and none by a worker; at -j2 and
# -j3 every one by a worker and none by the main thread. The pixels are the same either way,
# and a file that cannot be read (listed but missing) is still skipped with its name, by a
# worker (-j2) and by the main thread (-j1).
source "$(dirname "$0")/lib/common.sh"

command -v strace > /dev/null || { echo "skipped: strace is not installed (apt install strace)"; exit 77; }

photo_folder "$TMP/photos" "ab" 2

# opens ARGS...: run dataconv under strace; prints "MAIN OTHER": openat calls of the input
# .jpg files from the main thread and from any other thread
opens() {
    rm -f "$TMP/out.h5"
    # (LeakSanitizer cannot run under ptrace: an ASan build checks leaks in the last run only)
    ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
        strace -f -qq -e trace=openat -o "$TMP/trace" "$DATACONV" "$TMP/photos" "$TMP/out.h5" \
        --resize 32 --quiet "$@" > "$TMP/stdout" 2> "$TMP/err" || { show; fail "dataconv failed"; }
    "$PYTHON" - "$TMP/trace" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
pids = [int(m.group(1)) for m in (re.match(r"^(\d+) ", ln) for ln in lines) if m]
main = pids[0]  # the first line is the process itself (execve's thread)
jpg = [int(ln.split()[0]) for ln in lines if re.search(r'openat\(.*photos/.*\.jpg"', ln)]
print(sum(p == main for p in jpg), sum(p != main for p in jpg))
PY
}

n=$(find "$TMP/photos" -name '*.jpg' | wc -l)
check "-j1: the main thread opens every input image, no worker opens one"
read -r main other < <(opens -j 1)
echo "  $n images: opened by the main thread $main, by other threads $other"
[ "$main" -eq "$n" ] && [ "$other" -eq 0 ] ||
    fail "-j1: $main of $n images opened by the main thread, $other by the worker"
cp "$TMP/out.h5" "$TMP/out_j1.h5"
for j in 2 3; do
    check "-j$j: the workers open every input image, the main thread none"
    read -r main other < <(opens -j "$j")
    echo "  $n images: opened by the main thread $main, by other threads $other"
    [ "$main" -eq 0 ] && [ "$other" -eq "$n" ] ||
        fail "-j$j: $main of $n images opened by the main thread, $other by workers"
    cp "$TMP/out.h5" "$TMP/out_j$j.h5"
done

check "-j1, -j2 and -j3 store the same pixels"
"$PYTHON" -c "
import h5py, numpy as np, sys
a, b, c = (h5py.File(f, 'r')['data'][:] for f in sys.argv[1:4])
assert a.shape == b.shape == c.shape and (a == b).all() and (a == c).all(), 'pixels differ'
" "$TMP/out_j1.h5" "$TMP/out_j2.h5" "$TMP/out_j3.h5" || fail "-j1, -j2 and -j3 differ"

check "an input that cannot be read (listed, but missing) is skipped with its name, the rest converted"
(cd "$TMP/photos" && find . -name '*.jpg' | sort | sed 's|^\./||; s|$| 0|') > "$TMP/list.txt"
sed -i '3i a/gone.jpg 1' "$TMP/list.txt"
for j in 1 2; do
    rm -f "$TMP/out.h5"
    "$DATACONV" --list "$TMP/list.txt" --root "$TMP/photos" "$TMP/out.h5" --resize 32 -j "$j" \
        > "$TMP/stdout" 2> "$TMP/err" || { show; fail "-j$j: dataconv failed"; }
    grep -q 'gone.jpg: cannot open' "$TMP/err" || { show; fail "-j$j: no message naming the missing file"; }
    "$PYTHON" -c "
import h5py, sys
assert h5py.File(sys.argv[1], 'r')['data'].shape[0] == int(sys.argv[2])
" "$TMP/out.h5" "$n" || fail "-j$j: expected $n images in the output"
done
echo "convert_read_ahead: all checks passed"
