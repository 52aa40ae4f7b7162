#!/usr/bin/env bash
# A build without the image libraries (-DLIBDATA_WITH_TIFF=OFF -DLIBDATA_WITH_WEBP=OFF
# -DLIBDATA_WITH_GIF=OFF): the configure says so for each, the library builds (only dataconv
# and its library, about a minute), and a TIFF, a WebP and a GIF are skipped as "<format>
# support not built" while BMP, PNM and JPEG still convert. Without libarchive
# (-DLIBDATA_WITH_ARCHIVE=OFF, same build) a tar SRC is refused, saying so.
source "$(dirname "$0")/lib/common.sh"
if asan_build || emulated || [ -n "${CMAKE_TOOLCHAIN_FILE:-}" ]; then
    echo "skipped: needs a native, non-sanitizer build"
    exit 77
fi
command -v convert >/dev/null ||
    fail "ImageMagick's convert is missing: scripts/deps.sh test installs imagemagick"

check "configure and build with TIFF, WebP and GIF off"
cmake -S "$SRC" -B "$TMP/b" -DLIBDATA_WITH_TIFF=OFF -DLIBDATA_WITH_WEBP=OFF \
    -DLIBDATA_WITH_GIF=OFF -DLIBDATA_WITH_ARCHIVE=OFF -DLIBDATA_BUILD_TESTS=OFF -DLIBDATA_BUILD_BENCH=OFF \
    -DCMAKE_BUILD_TYPE=Release > "$TMP/configure.log" 2>&1 ||
    { cat "$TMP/configure.log" >&2; fail "configure"; }
for f in TIFF WEBP GIF; do
    grep -q "libdata: $f input: NO (LIBDATA_WITH_$f=OFF)" "$TMP/configure.log" ||
        { cat "$TMP/configure.log" >&2; fail "the configure does not say $f is off"; }
done
grep -q "libdata: tar archive input: NO (LIBDATA_WITH_ARCHIVE=OFF)" "$TMP/configure.log" ||
    { cat "$TMP/configure.log" >&2; fail "the configure does not say archives are off"; }
cmake --build "$TMP/b" -j2 --target dataconv > "$TMP/build.log" 2>&1 ||
    { tail -30 "$TMP/build.log" >&2; fail "build"; }
# (the decoders' files only: -O3 finds maybe-uninitialized noise elsewhere, e.g. plan_shape.c)
if grep -E "codec/.*warning:" "$TMP/build.log"; then fail "codec warnings without the libraries"; fi

check "TIFF, WebP, GIF skipped as not built; BMP, PNM, JPEG converted"
mkdir -p "$TMP/in/c"
p=$LD_TEST_DATA/photos/p00.jpg
for ext in tif webp gif bmp ppm jpe; do
    convert "$p" -resize 40x30! "$TMP/in/c/x.$ext"
done
run "$TMP/b/dataconv" "$TMP/in" "$TMP/out.h5"
expect_rc 0
for f in TIFF WebP GIF; do
    ext=$(tr 'A-Z' 'a-z' <<<"$f" | sed 's/tiff/tif/')
    expect_err "x.$ext: $f support not built"
done
expect_err "converted 3 of 6 images"

check "a tar SRC is refused: libarchive not built"
tar cf "$TMP/in.tar" -C "$TMP/in" .
run "$TMP/b/dataconv" "$TMP/in.tar" "$TMP/tar.h5"
[ "$rc" -ne 0 ] || fail "a tar SRC converted without libarchive"
expect_err "in.tar: tar archives as input need libdata built with libarchive"
[ ! -e "$TMP/tar.h5" ] || fail "output written"
echo "formats_not_built: all checks passed"
