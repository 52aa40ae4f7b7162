# Cross-build libdata for 32-bit ARM (armhf: ARMv7, hard float, e.g. Raspberry Pi OS 32-bit) on a
# Debian amd64 host (crossbuild-essential-armhf). ctest runs the programs through qemu-arm
# (qemu-user) via CMAKE_CROSSCOMPILING_EMULATOR; CLI tests get a DATACONV wrapper that does the same.
#   cmake -S . -B build-armhf -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-armhf.cmake
# Libraries: Debian's :armhf packages, libhdf5-dev unpacked into LIBDATA_DEPS_PREFIX
# (scripts/ci_32bit.sh). Criterion has no armhf package: build with -DLIBDATA_BUILD_TESTS=OFF
# and -DLIBDATA_SMOKE_TESTS=ON (CLI tests and C examples, see tests/CMakeLists.txt).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR armv7l)
set(LIBDATA_MULTIARCH arm-linux-gnueabihf)
set(CMAKE_C_COMPILER arm-linux-gnueabihf-gcc)
find_program(LIBDATA_QEMU_ARM qemu-arm REQUIRED)
set(CMAKE_CROSSCOMPILING_EMULATOR ${LIBDATA_QEMU_ARM})
include(${CMAKE_CURRENT_LIST_DIR}/toolchain-common.cmake)
