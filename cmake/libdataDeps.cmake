# libdata_private_deps(WITH_HDF5 WITH_LMDB [WITH_WEBP]): the lookups of the dependencies that have no CMake
# package of their own, shared by the build (CMakeLists.txt) and a consumer's
# find_package(libdata) (libdataConfig.cmake, installed beside this file). Names are private
# (LIBDATA_HDF5_*, LIBDATA_LMDB_*, PkgConfig::LIBDATA_HDF5, libdata::lmdb): a consumer's own
# find_package(HDF5) / HDF5_* variables are left as they are. A second call is a no-op.
# WebP has no CMake package in Debian 12: pkg-config libwebp + libwebpdemux (the animation
# decoder), as PkgConfig::LIBDATA_WEBP.
function(libdata_private_deps with_hdf5 with_lmdb)
  set(with_webp OFF)
  if(ARGC GREATER 2)
    set(with_webp ${ARGV2})
  endif()
  if(with_webp AND NOT TARGET PkgConfig::LIBDATA_WEBP)
    find_package(PkgConfig REQUIRED)
    pkg_check_modules(LIBDATA_WEBP REQUIRED IMPORTED_TARGET libwebp libwebpdemux)
  endif()
  if(with_hdf5 AND NOT TARGET PkgConfig::LIBDATA_HDF5)
    find_package(PkgConfig REQUIRED)
    # Ask for the serial HDF5 by name: installing an MPI HDF5 switches the plain name to it.
    pkg_check_modules(LIBDATA_HDF5 REQUIRED IMPORTED_TARGET hdf5-serial)
  endif()
  if(with_lmdb AND NOT TARGET libdata::lmdb)
    find_path(LIBDATA_LMDB_INCLUDE_DIR lmdb.h REQUIRED)
    find_library(LIBDATA_LMDB_LIBRARY lmdb REQUIRED)
    add_library(libdata::lmdb UNKNOWN IMPORTED)
    set_target_properties(libdata::lmdb PROPERTIES IMPORTED_LOCATION ${LIBDATA_LMDB_LIBRARY}
                          INTERFACE_INCLUDE_DIRECTORIES ${LIBDATA_LMDB_INCLUDE_DIR})
  endif()
endfunction()
