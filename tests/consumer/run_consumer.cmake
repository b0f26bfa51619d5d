# ctest driver: install the built tree into a scratch prefix, then configure, build and run
# the consumer project against it. Arguments: BUILD_DIR, SOURCE_DIR, WORK_DIR, CXX.
file(REMOVE_RECURSE "${WORK_DIR}")
execute_process(COMMAND ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${WORK_DIR}/prefix"
  RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "install failed: ${rc}")
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
consumer_build(build)
consumer_run("${WORK_DIR}/build/consumer")
consumer_run("${WORK_DIR}/build/consumer_core")
# A host without oneTBB: find_package(tendon) must still give tendon::tendon.
consumer_build(build_no_tbb -DCONSUMER_TBB=OFF -DCMAKE_DISABLE_FIND_PACKAGE_TBB=ON)
consumer_run("${WORK_DIR}/build_no_tbb/consumer_core")
