#!/usr/bin/env bash
# Conversion reads the input files on the calling thread, a window ahead of the decoding
# workers (convert.c: read_ahead): the workers, the run's critical path, only decode and
# resize. Checked with strace: every input image is opened by the main thread (the process'
# own id), none by a worker, for -j1 and -j2; the pixels are the same either way, and a file
# that cannot be read (listed but missing) is still skipped with its name.
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

for j in 1 2; do
    check "-j$j: the main thread opens every input image, no worker opens one"
    read -r main other < <(opens -j "$j")
    n=$(find "$TMP/photos" -name '*.jpg' | wc -l)
    echo "  $n images: opened by the main thread $main, by other threads $other"
    [ "$main" -eq "$n" ] && [ "$other" -eq 0 ] ||
        fail "-j$j: $main of $n images opened by the main thread, $other by workers"
    cp "$TMP/out.h5" "$TMP/out_j$j.h5"
done

check "-j1 and -j2 store the same pixels"
"$PYTHON" -c "
import h5py, numpy as np, sys
a, b = (h5py.File(f, 'r')['data'][:] for f in sys.argv[1:3])
assert a.shape == b.shape and (a == b).all(), 'pixels differ'
" "$TMP/out_j1.h5" "$TMP/out_j2.h5" || fail "-j1 and -j2 differ"

check "an input that cannot be read (listed, but missing) is skipped with its name, the rest converted"
(cd "$TMP/photos" && find . -name '*.jpg' | sort | sed 's|^\./||; s|$| 0|') > "$TMP/list.txt"
sed -i '3i a/gone.jpg 1' "$TMP/list.txt"
rm -f "$TMP/out.h5"
"$DATACONV" --list "$TMP/list.txt" --root "$TMP/photos" "$TMP/out.h5" --resize 32 -j 2 \
    > "$TMP/stdout" 2> "$TMP/err" || { show; fail "dataconv failed"; }
grep -q 'gone.jpg: cannot open' "$TMP/err" || { show; fail "no message naming the missing file"; }
n=$(find "$TMP/photos" -name '*.jpg' | wc -l)
"$PYTHON" -c "
import h5py, sys
assert h5py.File(sys.argv[1], 'r')['data'].shape[0] == int(sys.argv[2])
" "$TMP/out.h5" "$n" || fail "expected $n images in the output"
echo "convert_read_ahead: all checks passed"
