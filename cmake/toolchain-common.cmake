# Shared part of toolchain-i386.cmake and toolchain-armhf.cmake (set LIBDATA_MULTIARCH first).
# LIBDATA_DEPS_PREFIX: a folder holding unpacked .deb trees (usr/include, usr/lib/<multiarch>),
# searched before the system; default: the cache of scripts/ci_32bit.sh.
if(NOT LIBDATA_DEPS_PREFIX)
  if(DEFINED ENV{LIBDATA_DEPS_PREFIX})
    set(LIBDATA_DEPS_PREFIX $ENV{LIBDATA_DEPS_PREFIX})
  else()
    set(LIBDATA_DEPS_PREFIX $ENV{HOME}/.cache/libdata-32bit/${LIBDATA_MULTIARCH})
  endif()
endif()
set(LIBDATA_DEPS_PREFIX ${LIBDATA_DEPS_PREFIX} CACHE PATH "Unpacked foreign-architecture packages")
set(CMAKE_LIBRARY_ARCHITECTURE ${LIBDATA_MULTIARCH})
set(CMAKE_FIND_ROOT_PATH ${LIBDATA_DEPS_PREFIX} /)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# pkg-config must see only this architecture's .pc files (hdf5-serial.pc: the private one).
set(ENV{PKG_CONFIG_LIBDIR}
    "${LIBDATA_DEPS_PREFIX}/usr/lib/${LIBDATA_MULTIARCH}/pkgconfig:/usr/lib/${LIBDATA_MULTIARCH}/pkgconfig:/usr/share/pkgconfig")
if(NOT DEFINED HDF5_ROOT)
  # find_package(HDF5) in a consumer: the private headers and libraries, never the amd64 h5cc
  set(HDF5_ROOT ${LIBDATA_DEPS_PREFIX}/usr/lib/${LIBDATA_MULTIARCH}/hdf5/serial)
endif()
