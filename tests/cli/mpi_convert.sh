#!/usr/bin/env bash
# MPI mode (dataconv built with -DLIBDATA_WITH_MPI=ON): `mpirun --oversubscribe -np N dataconv
# SRC OUT` converts one part per rank and rank 0 merges them: the merged file equals a
# single-process run (h5py, python-lmdb) for raw and encoded HDF5 and for LMDB. A rerun skips
# every part (resume) and merges again. A failing rank (--strict with a bad file in its part;
# a part name taken by a directory) makes every rank exit non-zero and leaves no merged file.
# Open MPI from Debian, loopback only; as root with OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM).
source "$(dirname "$0")/lib/common.sh"
"$DATACONV" --version | grep -q " mpi" || { echo "mpi_convert: dataconv built without MPI (skipped)"; exit 77; }
command -v mpirun >/dev/null || { echo "mpi_convert: no mpirun (skipped)"; exit 77; }
nm -D --defined-only "$LIBDATA_LIBRARY" | grep -qw ld_merge ||
    { echo "mpi_convert: this libdata has no ld_merge yet (skipped)"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader \
    OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1
# Under ASan: Open MPI's own leaks are suppressed by library (tests/lsan.supp); that needs
# whole stacks (its libraries have no frame pointers) and its components still loaded at exit.
export OMPI_MCA_mca_base_component_disable_dlclose=1
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
equal=$SRC/tests/python/shard_merged_equal.py
big=$TMP/big
photo_folder "$big" abc 4 # 288 photos

mpi() { mpirun --oversubscribe -np "$@"; }

for spec in "h5 4 --resize 32 --quality 80 --shuffle --seed 3" "h5 3 --resize 24" \
    "lmdb 4 --resize 24 --shuffle --seed 9"; do
    read -r kind n opts <<<"$spec"
    # shellcheck disable=SC2086
    {
        check "mpirun -np $n: $kind $opts equals a single-process run"
        out=$TMP/m$n.$kind
        run mpi "$n" "$DATACONV" "$big" "$out" $opts
        expect_rc 0
        expect_err "MPI mode: $n ranks"
        expect_err "merged $n parts"
        expect_err "all $n parts are there ($n converted now, 0 complete from an earlier run): 288 images converted"
        [ -e "$out" ] || { show; fail "$out not written"; }
        "$DATACONV" "$big" "$TMP/single$n.$kind" $opts -q
        "$PYTHON" "$equal" "$kind" "$TMP/single$n.$kind" "$out"
        check "mpirun -np $n again: every part is complete, none converted; merged again"
        run mpi "$n" "$DATACONV" "$big" "$out" $opts
        expect_rc 0
        [ "$(grep -c "already complete, skipped" "$TMP/err")" -eq "$n" ] || { show; fail "not all $n parts skipped"; }
        ! grep -q "^dataconv: converted" "$TMP/err" || { show; fail "a part was converted again"; }
        expect_err "all $n parts are there (0 converted now, $n complete from an earlier run)"
        check "mpirun -np $n with part 1 removed: only that part is converted, then merged"
        rm -rf "${out%.*}-00001-of-0000$n.$kind"
        run mpi "$n" "$DATACONV" "$big" "$out" $opts
        expect_rc 0
        expect_err "all $n parts are there (1 converted now, $((n - 1)) complete from an earlier run)"
        "$PYTHON" "$equal" "$kind" "$TMP/single$n.$kind" "$out"
    }
done

# Each rank's exit code, recorded by a wrapper (mpirun itself aborts the job at the first
# non-zero exit and reports only that one).
ranks_rc() { # N OUT ARGS...: runs, then leaves the codes in $TMP/rc.*
    local n=$1
    shift
    rm -f "$TMP"/rc.*
    set +e
    mpi "$n" bash -c '"$@"; echo $? > "'"$TMP"'/rc.$OMPI_COMM_WORLD_RANK"' _ "$DATACONV" "$@" \
        >"$TMP/out" 2>"$TMP/err"
    set -e
    for ((k = 0; k < n; k++)); do
        [ -f "$TMP/rc.$k" ] || { show; fail "rank $k recorded no exit code"; }
        [ "$(cat "$TMP/rc.$k")" -ne 0 ] || { show; fail "rank $k exited 0 although a rank failed"; }
    done
}
check "a failing rank (--strict, a bad file in one part): every rank non-zero, no merged file"
cp -r "$big" "$TMP/bad"
echo "not an image" >"$TMP/bad/c/zz_broken.jpg" # sorts last: the last part's
ranks_rc 4 "$TMP/bad" "$TMP/f.h5" --resize 24 --strict
[ ! -e "$TMP/f.h5" ] || fail "a merged file was written although a rank failed"
expect_err "zz_broken.jpg: not an image file"
expect_err "another rank failed (its message is above): no merged file written"
[ "$(cat "$TMP/rc.3")" -eq 3 ] || fail "the failing rank should exit 3 (input refused), got $(cat "$TMP/rc.3")"
[ -f "$TMP/f-00000-of-00004.h5" ] || fail "the good parts should stay for a rerun"
check "a part name taken by a directory: that rank fails, every rank non-zero, no merged file"
mkdir "$TMP/g-00001-of-00004.h5"
ranks_rc 4 "$big" "$TMP/g.h5" --resize 24
[ ! -e "$TMP/g.h5" ] || fail "a merged file was written although a rank failed"
expect_err "g-00001-of-00004.h5 exists but is not a complete libdata part"
echo "mpi_convert: all checks passed"
