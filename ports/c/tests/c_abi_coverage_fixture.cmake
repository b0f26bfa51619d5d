# ports/c/tests/c_abi_coverage_fixture.cmake: runs the coverage check (c_abi_coverage.cmake)
# on copies of its inputs with one gap opened, to show that the check fails on it.
#   cmake <c_abi_coverage.cmake's -D arguments> -DWORK_DIR=<scratch dir>
#         [-DADD_WORLD_CALL=<declaration>] [-DADD_C_STRUCT=<struct name>] [-DADD_MAP_LINE=<line>]
#         -P ports/c/tests/c_abi_coverage_fixture.cmake
# ADD_WORLD_CALL is declared first in World's public section; ADD_C_STRUCT is a one-field
# struct appended to the C header; ADD_MAP_LINE is appended to the mapping. The copies go to
# WORK_DIR, and the check runs on them (its findings are this script's output).
cmake_minimum_required(VERSION 3.20)
if(NOT WORK_DIR)
  message(FATAL_ERROR "usage: see the top of c_abi_coverage_fixture.cmake")
endif()
file(MAKE_DIRECTORY "${WORK_DIR}")
file(READ "${WORLD_HEADER}" _world)
file(READ "${C_HEADER}" _c_header)
file(READ "${MAP}" _map)
if(ADD_WORLD_CALL)
  string(REPLACE "class TENDON_API World {\n public:\n" "class TENDON_API World {\n public:\n  ${ADD_WORLD_CALL};\n" _world
    "${_world}")
endif()
if(ADD_C_STRUCT)
  string(APPEND _c_header "\ntypedef struct ${ADD_C_STRUCT} {\n  int32_t value;\n} ${ADD_C_STRUCT};\n")
endif()
if(ADD_MAP_LINE)
  string(APPEND _map "\n${ADD_MAP_LINE}\n")
endif()
file(WRITE "${WORK_DIR}/world.h" "${_world}")
file(WRITE "${WORK_DIR}/tendon_c.h" "${_c_header}")
file(WRITE "${WORK_DIR}/world_calls.txt" "${_map}")
set(WORLD_HEADER "${WORK_DIR}/world.h")
set(C_HEADER "${WORK_DIR}/tendon_c.h")
set(MAP "${WORK_DIR}/world_calls.txt")
include("${CMAKE_CURRENT_LIST_DIR}/c_abi_coverage.cmake")
