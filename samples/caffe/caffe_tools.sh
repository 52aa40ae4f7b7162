# shellcheck shell=bash
# Sourced by samples/caffe/*.sh and tests/cli/caffe_*.sh: where a Caffe build keeps its tools.
# caffe_tool NAME prints the path of Caffe's tool NAME (caffe, compute_image_mean,
# convert_imageset) under $CAFFE_ROOT, which may be
#   - a Caffe source tree built with its Makefile:  build/tools/NAME (build -> .build_release)
#   - that Makefile build directory itself, or a CMake build directory: tools/NAME
#   - a CMake install prefix: bin/NAME; a `make distribute` folder: bin/NAME.bin
# and fails (status 1, nothing printed) when there is none.
caffe_tool() {
    local p
    for p in "$CAFFE_ROOT/build/tools/$1" "$CAFFE_ROOT/.build_release/tools/$1" \
             "$CAFFE_ROOT/tools/$1" "$CAFFE_ROOT/bin/$1" "$CAFFE_ROOT/bin/$1.bin"; do
        if [ -f "$p" ] && [ -x "$p" ]; then
            echo "$p"
            return 0
        fi
    done
    return 1
}
# find_built NAME prints the newest NAME under the callers' checkout's build*/ folders ($SRC).
find_built() {
    ls -t "$SRC"/build*/"$1" 2>/dev/null | head -n 1
}
# caffe_preload LAYER prints the LD_PRELOAD value that loads libdata's layer library LAYER into
# Caffe: LAYER itself, after the sanitizer runtimes it links when it was built with
# -DLIBDATA_SANITIZE (those must be loaded before anything else).
caffe_preload() {
    local deps
    deps=$(ldd "$1" 2>/dev/null || true)
    awk '/lib(asan|ubsan|tsan)\.so/ { printf "%s:", $3 }' <<<"$deps"
    echo "$1"
}
