#!/usr/bin/env bash
# An output that is, or lies inside, an input is refused before anything is written, and the
# input is left byte for byte as it was (issue 12, item 1). Compared by device and inode, so
# hard links and "../" spellings are caught too. Also `dataconv mean` OUT vs its INPUT.
source "$(dirname "$0")/lib/common.sh"
cd "$TMP"
cp -r "$LD_TEST_DATA/tree" images
(cd images && find . -type f \( -iname '*.jpg' -o -iname '*.jpeg' -o -iname '*.png' \) | sed 's|^\./||' | sort | awk '{print $0" "NR%3}') > l.txt
first=$(find images -name '*.jpg' | sort | head -1)
sums() { md5sum l.txt "$first"; find images -type f | sort | xargs md5sum; }
sums > before.md5

# refused: exit 1 (an impossible combination, nothing read or written), message, input intact
refused() { # WHAT PATTERN CMD...
    local what=$1 pattern=$2
    shift 2
    check "$what"
    run "$@"
    expect_rc 1
    expect_err "$pattern"
    expect_err "nothing was written"
    sums | cmp -s - before.md5 || { sums | diff - before.md5 >&2; fail "$what: an input changed"; }
}
refused "--list L --root R L (OUT is the list file)" "is the input list file" \
    "$DATACONV" --list l.txt --root images l.txt --resize 8
refused "convert_imageset order ROOT/ L L" "is the input list file" \
    "$DATACONV" images/ l.txt l.txt -resize_width 8 -resize_height 8
refused "SRC SRC/a/x.jpg (OUT inside SRC)" "lies inside the input folder" \
    "$DATACONV" images "$first" --resize 8
refused "OUT inside SRC by another spelling (SRC/../SRC/new.h5)" "lies inside the input folder" \
    "$DATACONV" images "images/../images/new.h5" --resize 8
refused "an LMDB inside SRC" "lies inside the input folder" \
    "$DATACONV" images images/cat.lmdb --resize 8
refused "OUT is the list under a hard link" "is the input list file" \
    bash -c 'ln -f l.txt l_link.txt && exec "$0" --list l.txt --root images l_link.txt --resize 8' \
    "$DATACONV"
rm -f l_link.txt
refused "OUT is SRC itself (--format lmdb)" "is the input folder" \
    "$DATACONV" images images --resize 8 --format lmdb
ln "$first" hard.jpg
refused "OUT is an input image under another name (hard link, found while reading)" \
    "this input image is also the output file hard.jpg" \
    "$DATACONV" images hard.jpg --resize 8 --format hdf5
refused "list mode: OUT is a listed image (hard link)" "this input image is also the output" \
    "$DATACONV" --list l.txt --root images hard.jpg --resize 8 --format hdf5
[ ! -e images/new.h5 ] && [ -z "$(find images -name '*.tmp-*')" ] || fail "something left in images/"

check "list mode: OUT inside --root is fine (the root is only a prefix of the listed paths)"
run "$DATACONV" --list l.txt --root images images/inside.h5 --resize 8 -q
expect_rc 0
cd images && run "$DATACONV" --list ../l.txt --root . inside2.h5 --resize 8 -q && cd ..
expect_rc 0
rm -f images/inside.h5 images/inside2.h5
sums | cmp -s - before.md5 || fail "inputs changed by a legitimate run"

check "mean: OUT is the input file, inside the input LMDB, or a part of the input list"
"$DATACONV" images t.h5 --resize 8 -q
"$DATACONV" images t.lmdb --resize 8 -q
"$DATACONV" images sp.h5 --resize 8 --split 1K -q
md5sum t.h5 t.lmdb/data.mdb sp.txt sp-00001.h5 > mean_inputs.md5
run "$DATACONV" mean t.h5 t.h5
expect_rc 1
expect_err "would replace the input t.h5"
run "$DATACONV" mean t.lmdb t.lmdb/data.mdb
expect_rc 1
expect_err "would be written inside the input t.lmdb"
run "$DATACONV" mean sp.txt sp-00001.h5
expect_rc 1
expect_err "a file of the input list sp.txt"
md5sum -c --quiet mean_inputs.md5 || fail "mean changed its input"
run "$DATACONV" mean sp.txt m.binaryproto
expect_rc 0
echo "output_vs_input: all checks passed"
