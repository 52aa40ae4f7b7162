#!/usr/bin/env bash
# dataconv's command line: usage errors exit 2 with a message that says what to do,
# --help and --version exit 0. Nothing here needs a working conversion.
source "$(dirname "$0")/lib/common.sh"

tree=$LD_TEST_DATA/tree
list=$LD_TEST_DATA/list.txt
out=$TMP/out.h5

# usage ARGS... -- EXPECTED_STDERR_FRAGMENT
usage() {
    local want=${!#}
    local args=("${@:1:$#-1}")
    check "dataconv ${args[*]} -> exit 2, '$want'"
    run "$DATACONV" "${args[@]}"
    expect_rc 2
    expect_err "$want"
    expect_err "dataconv --help"
    [ ! -e "$out" ] || fail "a usage error wrote $out"
}

usage "missing SRC and OUT"
usage "$tree" "missing OUT"
usage "$tree" "$out" --bogus "unknown option '--bogus'"
usage "$tree" "$out" --quality 101 "out of range (quality must be 0..100)"
usage "$tree" "$out" --quality abc "'abc' is not an integer"
usage "$tree" "$out" --resize 0 "expected N (for NxN) or WxH"
usage "$tree" "$out" --resize 12x "expected N (for NxN) or WxH"
usage "$tree" "$out" --mode wobble "expected squash, crop, pad or max"
usage "$tree" "$out" --format tiff "expected auto, hdf5 or lmdb"
usage "$tree" "$out" --backend leveldb "LevelDB is not supported"
usage "$tree" "$out" --encode-type gif "expected jpg or png"
usage "$tree" "$out" --split 5Q "expected a size in bytes"
usage "$tree" "$out" --pad-value 256 "out of range"
usage "$tree" "$out" -j "needs a value"
usage "$tree" "$out" -gray=maybe "expected true or false"
usage "$tree" "$out" --resize_width 64 "must be given together"
usage "$tree" "$LD_TEST_DATA/photos" "$out" "is not a file"
usage "$tree" "$list" "$out" extra "too many arguments"
usage --list "$list" "$out" "--list needs --root"
usage --list "$TMP/nope.txt" --root "$tree" "$out" "no such file"
usage info "missing FILE"
usage info a b "takes one FILE"

check "--help: exit 0, usage, examples and exit codes on stdout"
run "$DATACONV" --help
expect_rc 0
expect_out "Usage:"
expect_out "Examples:"
expect_out "Exit codes:"
expect_out "130"
expect_out "resize_width"
run "$DATACONV" -h
expect_rc 0
expect_out "Usage:"
run "$DATACONV" help
expect_rc 0
expect_out "Usage:"

check "--version: exit 0, dataconv and libdata versions"
run "$DATACONV" --version
expect_rc 0
grep -Eq '^dataconv [0-9]+\.[0-9]+\.[0-9]+ \(libdata [0-9]+\.[0-9]+\.[0-9]+' "$TMP/out" ||
    fail "unexpected --version output: $(cat "$TMP/out")"

check "a flag after the positionals and the --flag=value form are accepted (-h wins)"
run "$DATACONV" "$tree" "$out" --quality=70 --resize=64 -h
expect_rc 0
echo "usage: all checks passed"
