#!/usr/bin/env bash
# Install the build into a temporary prefix, then build and run the C examples against it
# twice: with pkg-config (shared) and with CMake's find_package (shared and static).
set -euo pipefail
: "${BUILD_DIR:?}" "${SRC:?}"
if ldd "$BUILD_DIR/libdata.so" | grep -E 'libasan|libtsan|libubsan' >/dev/null; then
    echo "skipped: a sanitizer build is not installed for outside consumers"
    exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$BUILD_DIR" --prefix "$tmp/prefix" >/dev/null
export PKG_CONFIG_PATH=$tmp/prefix/lib/pkgconfig
echo "pkg-config: $(pkg-config --modversion libdata)"
cc "$SRC/samples/examples/convert_folder.c" $(pkg-config --cflags --libs libdata) \
   -Wl,-rpath,"$tmp/prefix/lib" -o "$tmp/convert_folder"
cc "$SRC/samples/examples/read_batches.c" $(pkg-config --cflags --libs libdata) \
   -Wl,-rpath,"$tmp/prefix/lib" -o "$tmp/read_batches"
"$tmp/convert_folder" "$SRC/samples/images" "$tmp/a.h5" > /dev/null 2>&1
"$tmp/read_batches" "$tmp/a.h5" | grep "epoch 1: 5 batches, 160 samples" >/dev/null
mkdir "$tmp/consumer"
cat > "$tmp/consumer/CMakeLists.txt" <<CMK
cmake_minimum_required(VERSION 3.21)
project(consumer C)
find_package(libdata 0.1 REQUIRED)
add_executable(shared_app $SRC/samples/examples/convert_folder.c)
target_link_libraries(shared_app PRIVATE libdata::libdata)
add_executable(static_app $SRC/samples/examples/read_batches.c)
target_link_libraries(static_app PRIVATE libdata::libdata_static)
CMK
cmake -S "$tmp/consumer" -B "$tmp/consumer/b" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/consumer/b" >/dev/null
"$tmp/consumer/b/shared_app" "$SRC/samples/images" "$tmp/b.h5" > /dev/null 2>&1
"$tmp/consumer/b/static_app" "$tmp/b.h5" | grep "epoch 1: 5 batches, 160 samples" >/dev/null
cmp "$tmp/a.h5" "$tmp/b.h5"
echo "install_consumers: pkg-config and find_package (shared + static) consumers work"
