#!/usr/bin/env bash
# Install the build into a temporary prefix, then build and run the C examples against it
# twice: with pkg-config (shared) and with CMake's find_package (shared and static); and a
# consumer that also calls find_package(HDF5) and links HDF5 itself.
set -euo pipefail
: "${BUILD_DIR:?}" "${SRC:?}"
if "$SRC/tests/cli/lib/ldd.sh" "$BUILD_DIR/libdata.so" | grep -E 'libasan|libtsan|libubsan' >/dev/null; then
    echo "skipped: a sanitizer build is not installed for outside consumers"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$BUILD_DIR" --prefix "$tmp/prefix" >/dev/null
# The installed dataconv finds the installed libdata.so.1 by its RUNPATH ($ORIGIN/../lib),
# without LD_LIBRARY_PATH or ldconfig (issue 12 item 9: it failed to start).
if [ -x "$tmp/prefix/bin/dataconv" ]; then
    (unset LD_LIBRARY_PATH; "$tmp/prefix/bin/dataconv" --version) > "$tmp/version.txt" 2>&1 \
        || { cat "$tmp/version.txt" >&2; echo "FAIL: installed dataconv does not start" >&2; exit 1; }
    "$SRC/tests/cli/lib/ldd.sh" "$tmp/prefix/bin/dataconv" | grep -F "$tmp/prefix/" | grep -q libdata.so \
        || { "$SRC/tests/cli/lib/ldd.sh" "$tmp/prefix/bin/dataconv" >&2; echo "FAIL: dataconv uses another libdata" >&2; exit 1; }
fi
export PKG_CONFIG_PATH=$tmp/prefix/lib/pkgconfig
echo "pkg-config: $(pkg-config --modversion libdata)"
${CC:-cc} "$SRC/samples/examples/convert_folder.c" $(pkg-config --cflags --libs libdata) \
   -Wl,-rpath,"$tmp/prefix/lib" -o "$tmp/convert_folder"
${CC:-cc} "$SRC/samples/examples/read_batches.c" $(pkg-config --cflags --libs libdata) \
   -Wl,-rpath,"$tmp/prefix/lib" -o "$tmp/read_batches"
"$tmp/convert_folder" "$SRC/samples/images" "$tmp/a.h5" > /dev/null 2>&1
"$tmp/read_batches" "$tmp/a.h5" | grep "epoch 1: 5 batches, 160 samples" >/dev/null
# A fully static program from `pkg-config --static` alone (issue 26 item 13: HDF5's szip, zlib
# and libm were missing). glibc warns that getpwnam & co. in a static program need its
# shared libraries at run time (HDF5 calls them): a warning, not a failure.
if ${CC:-cc} -static "$SRC/samples/examples/read_batches.c" $(pkg-config --static --cflags --libs libdata) \
    -o "$tmp/read_batches_static" 2>"$tmp/static.err"; then
    file "$tmp/read_batches_static" | grep -q "statically linked" || { echo "FAIL: not static" >&2; exit 1; }
    "$tmp/read_batches_static" "$tmp/a.h5" | grep "epoch 1: 5 batches, 160 samples" >/dev/null ||
        { echo "FAIL: the static read_batches did not read a.h5" >&2; exit 1; }
    echo "static link with pkg-config --static: ok"
elif grep -q "cannot find -l" "$tmp/static.err" && ! grep -q "undefined reference" "$tmp/static.err"; then
    # a library's static archive is not installed for this target (e.g. libaec-dev:i386)
    echo "note: no static link: $(grep -o "cannot find -l[^ :]*" "$tmp/static.err" | sort -u | tr '\n' ' ')"
else
    cat "$tmp/static.err" >&2
    echo "FAIL: -static with pkg-config --static --libs libdata does not link" >&2
    exit 1
fi
mkdir "$tmp/consumer"
cat > "$tmp/consumer/CMakeLists.txt" <<CMK
cmake_minimum_required(VERSION 3.21)
project(consumer C)
find_package(libdata 1.0 REQUIRED)
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

# A consumer that uses HDF5 itself: find_package(HDF5) first, then find_package(libdata),
# which must not overwrite its HDF5_* variables (issue 12 item 8: it did, through
# pkg_check_modules(HDF5 ...), and the link failed with "cannot find -lhdf5").
mkdir "$tmp/h5consumer"
cat > "$tmp/h5consumer/app.c" <<'C'
#include <hdf5.h>
#include <libdata/libdata.h>
#include <stdio.h>
int main(void)
{
    unsigned maj, min, rel;
    if (H5get_libversion(&maj, &min, &rel) < 0)
        return 1;
    printf("hdf5 %u.%u.%u libdata %s\n", maj, min, rel, ld_version_string());
    return 0;
}
C
cat > "$tmp/h5consumer/CMakeLists.txt" <<'CMK'
cmake_minimum_required(VERSION 3.21)
project(h5consumer C)
find_package(HDF5 REQUIRED COMPONENTS C)
set(before "${HDF5_C_LIBRARIES}|${HDF5_LIBRARIES}|${HDF5_INCLUDE_DIRS}|${HDF5_VERSION}")
find_package(libdata 1.0 REQUIRED)
set(after "${HDF5_C_LIBRARIES}|${HDF5_LIBRARIES}|${HDF5_INCLUDE_DIRS}|${HDF5_VERSION}")
if(NOT before STREQUAL after)
  message(FATAL_ERROR "find_package(libdata) changed HDF5_*:\n  ${before}\n  ${after}")
endif()
add_executable(app app.c)
target_include_directories(app PRIVATE ${HDF5_INCLUDE_DIRS})
target_link_libraries(app PRIVATE ${HDF5_C_LIBRARIES} libdata::libdata)
add_executable(app_static app.c)
target_include_directories(app_static PRIVATE ${HDF5_INCLUDE_DIRS})
target_link_libraries(app_static PRIVATE ${HDF5_C_LIBRARIES} libdata::libdata_static)
CMK
cmake -S "$tmp/h5consumer" -B "$tmp/h5consumer/b" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
    > "$tmp/h5consumer.log" 2>&1 || { cat "$tmp/h5consumer.log" >&2; echo "FAIL: configure" >&2; exit 1; }
cmake --build "$tmp/h5consumer/b" > "$tmp/h5consumer.log" 2>&1 \
    || { cat "$tmp/h5consumer.log" >&2; echo "FAIL: build with find_package(HDF5)" >&2; exit 1; }
version=$(sed -n 's/^#define LD_VERSION_STRING "\(.*\)"$/\1/p' "$SRC/libdata/include/libdata/libdata.h")
for app in app app_static; do
    "$tmp/h5consumer/b/$app" > "$tmp/app.out"
    grep -qE "^hdf5 [0-9.]+ libdata ${version//./\\.}\$" "$tmp/app.out" \
        || { cat "$tmp/app.out" >&2; echo "FAIL: $app does not print libdata $version" >&2; exit 1; }
done
echo "install_consumers: pkg-config and find_package (shared + static) consumers work," \
     "also next to the consumer's own find_package(HDF5)"
