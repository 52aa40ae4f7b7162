# libdata_find_makefile_caffe(ROOT): a Caffe built with its Makefile, which exports no CMake
# config. Defines the imported target libdata_caffe_makefile (libcaffe.so, Caffe's headers and
# generated caffe.pb.h, its dependencies' headers and libraries, and the compile definitions
# Caffe was built with) or stops with a message saying what was looked for.
#
# ROOT may be the source tree (include/ + build/, .build_release/ or .build_debug/), the build
# directory itself (include/ is then ../include), or a `make distribute` folder (include/ holding
# caffe/proto/caffe.pb.h, lib/).
function(libdata_find_makefile_caffe root)
  # Candidates: "headers;generated headers;library directory".
  set(candidates)
  foreach(b build .build_release .build_debug)
    list(APPEND candidates "${root}/include|${root}/${b}/src|${root}/${b}/lib")
  endforeach()
  list(APPEND candidates "${root}/../include|${root}/src|${root}/lib"
                         "${root}/include|${root}/include|${root}/lib")
  set(found FALSE)
  foreach(c ${candidates})
    string(REPLACE "|" ";" parts "${c}")
    list(GET parts 0 inc)
    list(GET parts 1 gen)
    list(GET parts 2 libdir)
    if(EXISTS ${inc}/caffe/caffe.hpp AND EXISTS ${gen}/caffe/proto/caffe.pb.h AND
       EXISTS ${libdir}/libcaffe.so)
      set(found TRUE)  # inc, gen and libdir keep this candidate's values
      break()
    endif()
  endforeach()
  if(NOT found)
    message(FATAL_ERROR "CAFFE_ROOT=${root} is not a Caffe build: found neither CaffeConfig.cmake "
            "(a CMake build or install) nor, for a Makefile build, include/caffe/caffe.hpp with "
            "build/src/caffe/proto/caffe.pb.h and build/lib/libcaffe.so (also looked in "
            ".build_release/, .build_debug/, and for a `make distribute` folder). Build Caffe "
            "first (`make all` in its source tree) and give its source tree as CAFFE_ROOT.")
  endif()
  get_filename_component(inc ${inc} REALPATH)
  get_filename_component(gen ${gen} REALPATH)
  set(lib ${libdir}/libcaffe.so)
  get_filename_component(lib ${lib} REALPATH)

  # The headers change with Caffe's build options (CPU_ONLY changes the layout of caffe::Caffe),
  # so the layer must be compiled with the same definitions. The Makefile records them nowhere
  # but in the library itself: its needed libraries say which options were on.
  file(STRINGS ${lib} needed REGEX "^lib[a-z_0-9]+\\.so")
  set(defs)
  set(cuda OFF)
  if(NOT needed MATCHES "libcudart\\.so")
    list(APPEND defs CPU_ONLY)
  else()
    set(cuda ON)
  endif()
  foreach(pair "opencv_core|USE_OPENCV" "lmdb|USE_LMDB" "leveldb|USE_LEVELDB"
               "hdf5(_serial)?|USE_HDF5" "cudnn|USE_CUDNN" "nccl|USE_NCCL" "mkl_rt|USE_MKL")
    string(REPLACE "|" ";" p "${pair}")
    list(GET p 0 dep)
    list(GET p 1 def)
    if(needed MATCHES "(^|;)lib${dep}\\.so")
      list(APPEND defs ${def})
    endif()
  endforeach()

  # Dependencies whose headers Caffe's headers include (caffe/common.hpp: glog, gflags, boost;
  # caffe.pb.h: protobuf; caffe/util/mkl_alternate.hpp: cblas.h or mkl.h).
  find_package(Protobuf REQUIRED)
  find_path(LIBDATA_GLOG_INCLUDE glog/logging.h)
  find_library(LIBDATA_GLOG_LIBRARY glog)
  find_path(LIBDATA_GFLAGS_INCLUDE gflags/gflags.h)
  find_library(LIBDATA_GFLAGS_LIBRARY gflags)
  set(blas_header cblas.h)
  if(USE_MKL IN_LIST defs)
    set(blas_header mkl.h)
  endif()
  find_path(LIBDATA_CAFFE_BLAS_INCLUDE ${blas_header}
            PATH_SUFFIXES openblas atlas PATHS /opt/intel/mkl/include)
  foreach(v LIBDATA_GLOG_INCLUDE LIBDATA_GLOG_LIBRARY LIBDATA_GFLAGS_INCLUDE
            LIBDATA_GFLAGS_LIBRARY LIBDATA_CAFFE_BLAS_INCLUDE)
    if(NOT ${v})
      message(FATAL_ERROR "Caffe data layer: ${v} not found (Caffe's headers need glog, gflags, "
              "protobuf, boost and ${blas_header}: install their development packages, e.g. "
              "libgoogle-glog-dev libgflags-dev libprotobuf-dev libboost-dev libopenblas-dev)")
    endif()
  endforeach()
  set(includes ${inc} ${gen} ${LIBDATA_GLOG_INCLUDE} ${LIBDATA_GFLAGS_INCLUDE}
      ${Protobuf_INCLUDE_DIRS} ${Boost_INCLUDE_DIRS} ${LIBDATA_CAFFE_BLAS_INCLUDE})
  set(links ${LIBDATA_GLOG_LIBRARY} ${LIBDATA_GFLAGS_LIBRARY} protobuf::libprotobuf
      Boost::system Boost::thread Boost::filesystem)
  if(cuda)
    # Not tested here (no GPU): Caffe's headers then include the CUDA runtime's.
    find_package(CUDAToolkit REQUIRED)
    list(APPEND includes ${CUDAToolkit_INCLUDE_DIRS})
    list(APPEND links CUDA::cudart CUDA::cublas CUDA::curand)
  endif()

  add_library(libdata_caffe_makefile SHARED IMPORTED GLOBAL)
  set_target_properties(libdata_caffe_makefile PROPERTIES
    IMPORTED_LOCATION ${lib}
    INTERFACE_INCLUDE_DIRECTORIES "${includes}"
    INTERFACE_COMPILE_DEFINITIONS "${defs}"
    INTERFACE_LINK_LIBRARIES "${links}")
  list(JOIN defs " " defs_text)
  message(STATUS "Caffe data layer: Makefile-built Caffe ${lib} (headers ${inc}, ${gen}; "
          "defines ${defs_text}, read from the libraries it links)")
endfunction()
