# Cross-build libdata for 32-bit x86 (i386/i686) on a Debian amd64 host; the binaries run natively.
#   cmake -S . -B build-i386 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-i386.cmake
# Compiler: i686-linux-gnu-gcc (crossbuild-essential-i386) when present, else `gcc -m32`
# (gcc-multilib; the two packages conflict in Debian). -m32 is part of the compiler setting, not
# of CMAKE_C_FLAGS: a -DCMAKE_C_FLAGS=... on the command line would replace CMAKE_C_FLAGS_INIT.
# Libraries come from Debian's :i386 packages (dpkg --add-architecture i386); the ones that are
# not co-installable with their amd64 twins (libhdf5-dev, Criterion) are unpacked into a
# private prefix, LIBDATA_DEPS_PREFIX (scripts/ci_32bit.sh makes it), searched first.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR i686)
set(LIBDATA_MULTIARCH i386-linux-gnu)
find_program(LIBDATA_I686_GCC i686-linux-gnu-gcc)
if(LIBDATA_I686_GCC)
  set(CMAKE_C_COMPILER ${LIBDATA_I686_GCC})
else()
  set(CMAKE_C_COMPILER gcc -m32)
endif()
# The default i686 target has no SSE2: the SIMD resize paths would compile out (about 2.4x
# slower conversion). Every x86 CPU since 2003 has SSE2; -mfpmath=sse also gives the same float
# rounding as x86-64 (no x87 excess precision), so outputs are byte-identical to a 64-bit build.
# Configure with -DLIBDATA_I386_SSE2=OFF for a pre-SSE2 CPU.
option(LIBDATA_I386_SSE2 "Assume SSE2 on i386 (SIMD resize, x86-64-identical rounding)" ON)
if(LIBDATA_I386_SSE2)
  set(CMAKE_C_FLAGS_INIT "-msse2 -mfpmath=sse")
endif()
include(${CMAKE_CURRENT_LIST_DIR}/toolchain-common.cmake)
