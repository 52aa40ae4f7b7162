#!/usr/bin/env bash
# Install the Debian 12 packages libdata needs to build, test and benchmark (only the missing ones).
# Usage: scripts/deps.sh [build|test]   (default: test = everything)
set -euo pipefail
what=${1:-test}
# libtiff-dev, libwebp-dev, libgif-dev: TIFF, WebP and GIF input (issue 29; each can be turned
# off with -DLIBDATA_WITH_TIFF/WEBP/GIF=OFF, and such files are then skipped as not built).
# libarchive-dev: tar archives as input (issue 29; -DLIBDATA_WITH_ARCHIVE=OFF refuses them).
# libyajl-dev, libxml2-dev: COCO JSON and Pascal VOC XML detection input (-DLIBDATA_WITH_COCO/VOC=OFF).
build_pkgs="build-essential cmake pkg-config libjpeg62-turbo-dev libpng-dev zlib1g-dev libhdf5-dev liblmdb-dev
            libtiff-dev libwebp-dev libgif-dev libarchive-dev libyajl-dev libxml2-dev"
# Tests cross-check our files with independent tools: h5py, python3-lmdb + protobuf, h5dump,
# mdb_stat; fixtures are derived from the photographs that python3-skimage ships. Open MPI
# builds and runs dataconv's MPI mode (-DLIBDATA_WITH_MPI=ON, tests/cli/mpi_*.sh). The random
# resized crop's box rule is checked against torchvision's own (tests/python/test_py_rrc.py).
# strace counts the reader's read-ahead advice (tests/cli/reader_cache_advice.sh). djpeg
# (libjpeg-turbo-progs) decodes at reduced DCT scales for bench/dct_scale_quality.py.
# ImageMagick writes the input-format corpus (BMP, TIFF, WebP, GIF, PNM: tests/data/make_formats.py)
# and the fuzz seeds of those decoders (tests/fuzz/make_seeds.py --formats).
test_pkgs="libcriterion-dev hdf5-tools lmdb-utils python3 python3-numpy python3-h5py python3-pil
           python3-skimage python3-lmdb python3-protobuf protobuf-compiler python3-opencv python3-pytest
           python3-torch python3-torchvision python3-mypy valgrind gdb clang libclang-rt-14-dev clang-format-14 time
           libopenmpi-dev openmpi-bin strace libjpeg-turbo-progs imagemagick"
pkgs=$build_pkgs
[ "$what" = test ] && pkgs="$pkgs $test_pkgs"
# Installed native or architecture-independent packages, as dpkg names them (foo, foo:amd64):
# a foo:i386 that scripts/ci_32bit.sh installed must not count as foo.
# shellcheck disable=SC2086
have=$(dpkg-query -W -f='${binary:Package} ${Status}\n' $pkgs 2>/dev/null | awk '/install ok installed/ {print $1}' || true)
missing=()
for p in $pkgs; do
    grep -qx -e "$p" -e "$p:$(dpkg --print-architecture)" <<<"$have" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing: ${missing[*]}"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo=sudo
# A mirror caught mid-sync fails an index now and then ("File has unexpected size"): retry,
# then go on with the package lists there are (a package they lack then fails the install).
for try in 1 2 3; do
    $sudo apt-get -o DPkg::Lock::Timeout=600 update -q && break
    [ "$try" = 3 ] && echo "apt-get update failed 3 times; using the package lists there are" >&2
    [ "$try" = 3 ] || sleep 30
done
DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends "${missing[@]}"
