# Fuzz regression tests, part of the NORMAL test build (any compiler, no libFuzzer):
# each tests/fuzz/fuzz_<target>.c is linked with regression_driver.c into fuzzreg_<target>,
# and ctest test fuzz_regress_<target> replays every file of tests/fuzz/corpus/<target>/
# (seeds from make_seeds.py plus any crash input kept as a regression case).
# Included from tests/CMakeLists.txt; the libFuzzer build is tests/fuzz/CMakeLists.txt.
set(LD_FUZZ_DIR ${PROJECT_SOURCE_DIR}/tests/fuzz)
file(GLOB LD_FUZZ_TARGETS CONFIGURE_DEPENDS ${LD_FUZZ_DIR}/fuzz_*.c)
foreach(src ${LD_FUZZ_TARGETS})
  get_filename_component(name ${src} NAME_WE)
  string(REGEX REPLACE "^fuzz_" "" target ${name})
  add_executable(fuzzreg_${target} ${LD_FUZZ_DIR}/regression_driver.c ${src})
  target_link_libraries(fuzzreg_${target} PRIVATE libdata_obj)
  target_compile_definitions(fuzzreg_${target} PRIVATE _GNU_SOURCE)
  add_test(NAME fuzz_regress_${target}
           COMMAND fuzzreg_${target} ${LD_FUZZ_DIR}/corpus/${target})
  set_tests_properties(fuzz_regress_${target} PROPERTIES TIMEOUT 300)
endforeach()
