#!/usr/bin/env bash
# On a terminal (a pseudo-terminal from script(1)) dataconv draws a progress bar on stderr
# (done/total, images/s, ETA) that it clears before warnings and the summary; --quiet draws
# nothing, and so does a terminal that says it cannot (TERM=dumb: Emacs shells, some CI logs).
# --split prints the files it wrote.
source "$(dirname "$0")/lib/common.sh"

command -v script >/dev/null || { echo "SKIP: script(1) not installed (util-linux)"; exit 77; }
tree=$TMP/tree
cp -r "$LD_TEST_DATA/tree" "$tree"
: > "$tree/cat/zero.jpg"

check "on a TTY: a bar with done/total, img/s and ETA; the warning and the summary"
set +e
TERM=xterm script -qefc "'$DATACONV' '$tree' '$TMP/out.h5' --resize 32 -j 1" /dev/null > "$TMP/tty" 2>&1
rc=$?
set -e
expect_rc 0
grep -q $'\r\\[[#.]*\\] *[0-9]*/10 .*img/s ETA' "$TMP/tty" ||
    { cat -v "$TMP/tty"; fail "no progress bar"; }
grep -q "10/10 100%" "$TMP/tty" || { cat -v "$TMP/tty"; fail "the bar never reached 10/10"; }
grep -q "zero.jpg" "$TMP/tty" || { cat -v "$TMP/tty"; fail "no warning for zero.jpg"; }
grep -q $'\033\\[Kdataconv: converted 9 of 10' "$TMP/tty" ||
    { cat -v "$TMP/tty"; fail "summary not printed on a cleared line"; }

check "--quiet on a TTY: no bar, no summary"
set +e
TERM=xterm script -qefc "'$DATACONV' '$tree' '$TMP/q.h5' --resize 32 --quiet" /dev/null > "$TMP/tty" 2>&1
rc=$?
set -e
expect_rc 0
[ ! -s "$TMP/tty" ] || { cat -v "$TMP/tty"; fail "--quiet printed on a TTY"; }

check "TERM=dumb on a TTY: no bar, the summary as on a pipe"
set +e
TERM=dumb script -qefc "'$DATACONV' '$tree' '$TMP/d.h5' --resize 32 -j 1" /dev/null > "$TMP/tty" 2>&1
rc=$?
set -e
expect_rc 0
! grep -q 'img/s ETA' "$TMP/tty" || { cat -v "$TMP/tty"; fail "a bar on TERM=dumb"; }
grep -q "dataconv: converted 9 of 10" "$TMP/tty" || { cat -v "$TMP/tty"; fail "no summary on TERM=dumb"; }

check "--split 20K: several files listed in OUT-stem.txt, named in the summary"
run "$DATACONV" "$LD_TEST_DATA/tree" "$TMP/parts.h5" --resize 32 --split 20K
expect_rc 0
[ -f "$TMP/parts.txt" ] || { show; fail "no $TMP/parts.txt"; }
nfiles=$(grep -c . "$TMP/parts.txt")
[ "$nfiles" -ge 2 ] || fail "--split 20K made $nfiles file(s)"
expect_err "parts.txt"
total=0
while read -r f; do
    [ -f "$f" ] || [ -f "$TMP/$f" ] || fail "listed file $f missing"
    p=$f; [ -f "$p" ] || p=$TMP/$f
    n=$("$PYTHON" -c "import h5py,sys; print(len(h5py.File(sys.argv[1],'r')['label']))" "$p")
    total=$((total + n))
done < "$TMP/parts.txt"
[ "$total" -eq 9 ] || fail "split files hold $total samples, expected 9"
echo "progress: all checks passed"
