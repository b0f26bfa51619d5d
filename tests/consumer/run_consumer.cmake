# ctest driver: install the built tree into a scratch prefix, then configure, build and run
# the consumer project against it: C++ (with and without oneTBB) and C through CMake, C
# through pkg-config, and Python's ctypes on the installed library. Arguments: BUILD_DIR,
# SOURCE_DIR, WORK_DIR, CXX, CC, PYTHON, CTYPES_TEST (CXX_FLAGS / LINK_FLAGS in sanitizer
# builds, which build the C++ consumers only).
file(REMOVE_RECURSE "${WORK_DIR}")
execute_process(COMMAND ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${WORK_DIR}/prefix"
  RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "install failed: ${rc}")
endif()
# Every header lands under include/tendon/: nothing in a generic include/ports/ (or any other
# folder of include/) that other packages install into too.
file(GLOB _include_entries RELATIVE "${WORK_DIR}/prefix/include" "${WORK_DIR}/prefix/include/*")
if(NOT _include_entries STREQUAL "tendon")
  message(FATAL_ERROR "the install put ${_include_entries} in include/; only include/tendon/ is Tendon's")
endif()
# With everything: the TBB consumer and the core one.
function(consumer_build dir)
  execute_process(COMMAND ${CMAKE_COMMAND} -S "${SOURCE_DIR}" -B "${WORK_DIR}/${dir}"
    "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix" "-DCMAKE_CXX_COMPILER=${CXX}" "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}"
    "-DCMAKE_EXE_LINKER_FLAGS=${LINK_FLAGS}" ${ARGN} RESULT_VARIABLE rc)
  if(rc)
    message(FATAL_ERROR "configuring the consumer (${dir}) failed: ${rc}")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} --build "${WORK_DIR}/${dir}" RESULT_VARIABLE rc)
  if(rc)
    message(FATAL_ERROR "building the consumer (${dir}) failed: ${rc}")
  endif()
endfunction()
function(consumer_run exe)
  execute_process(COMMAND "${exe}" RESULT_VARIABLE rc)
  if(rc)
    message(FATAL_ERROR "${exe} failed: ${rc}")
  endif()
endfunction()
set(_with_c ON)
if(CXX_FLAGS)
  set(_with_c OFF)  # an instrumented libtendon_c needs an instrumented host
endif()
consumer_build(build -DCONSUMER_C=${_with_c} "-DCMAKE_C_COMPILER=${CC}")
consumer_run("${WORK_DIR}/build/consumer")
consumer_run("${WORK_DIR}/build/consumer_core")
if(_with_c)
  consumer_run("${WORK_DIR}/build/consumer_c")
  # pkg-config, as a host without CMake finds it.
  find_program(PKG_CONFIG pkg-config REQUIRED)
  file(GLOB_RECURSE _pc "${WORK_DIR}/prefix/*/tendon_c.pc")
  get_filename_component(_pc_dir "${_pc}" DIRECTORY)
  set(ENV{PKG_CONFIG_PATH} "${_pc_dir}")
  execute_process(COMMAND ${PKG_CONFIG} --cflags --libs tendon_c OUTPUT_VARIABLE _flags RESULT_VARIABLE rc
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(rc)
    message(FATAL_ERROR "pkg-config tendon_c failed: ${rc}")
  endif()
  separate_arguments(_flags UNIX_COMMAND "${_flags}")
  # pkg-config's flags as they are: their -Wl,-rpath must let the program find
  # libtendon_c.so.0 at run time without LD_LIBRARY_PATH.
  execute_process(COMMAND ${CC} -std=c11 -Wall -Wextra -Wpedantic -Werror "${SOURCE_DIR}/c_consumer.c" ${_flags}
    -lm -o "${WORK_DIR}/c_consumer_pkgconfig" RESULT_VARIABLE rc)
  if(rc)
    message(FATAL_ERROR "building the C consumer with pkg-config's flags (${_flags}) failed: ${rc}")
  endif()
  consumer_run("${WORK_DIR}/c_consumer_pkgconfig")
  file(GLOB_RECURSE _tendon_pc "${WORK_DIR}/prefix/*/tendon.pc")
  if(NOT _tendon_pc)
    message(FATAL_ERROR "no tendon.pc installed")
  endif()
  # Python's ctypes on the installed library.
  if(PYTHON AND CTYPES_TEST)
    file(GLOB_RECURSE _so "${WORK_DIR}/prefix/*/libtendon_c.so")
    execute_process(COMMAND "${PYTHON}" "${CTYPES_TEST}" "${_so}" RESULT_VARIABLE rc)
    if(rc)
      message(FATAL_ERROR "the ctypes test on the installed ${_so} failed: ${rc}")
    endif()
  endif()
endif()
# A host without oneTBB: find_package(tendon) must still give tendon::tendon.
consumer_build(build_no_tbb -DCONSUMER_TBB=OFF -DCONSUMER_C=OFF -DCMAKE_DISABLE_FIND_PACKAGE_TBB=ON)
consumer_run("${WORK_DIR}/build_no_tbb/consumer_core")
