# ports/c/tests/c_exports.cmake: libtendon_c exports the C ABI and nothing else.
#   cmake -DNM=<nm> -DLIBRARY=<libtendon_c.so> -P ports/c/tests/c_exports.cmake
# Lists the library's defined dynamic symbols (nm -D --defined-only) and fails naming every
# one that is not a tendon_* function (the linker's _init, _fini, _edata, _end and
# __bss_start aside): a C++ symbol there (an inline function's unique static, say) would
# collide with a host's own C++ or another Tendon.
cmake_minimum_required(VERSION 3.20)
if(NOT NM OR NOT LIBRARY)
  message(FATAL_ERROR "usage: cmake -DNM=... -DLIBRARY=... -P c_exports.cmake")
endif()
execute_process(COMMAND "${NM}" -D --defined-only "${LIBRARY}" OUTPUT_VARIABLE _out RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "c exports: ${NM} failed on ${LIBRARY}")
endif()
string(REPLACE "\n" ";" _lines "${_out}")
set(_api 0)
set(_foreign "")
foreach(_line IN LISTS _lines)
  if(_line MATCHES " ([^ ]+)$")
    set(_symbol "${CMAKE_MATCH_1}")
    if(_symbol MATCHES "^tendon_[a-z0-9_]+$")
      math(EXPR _api "${_api} + 1")
    elseif(NOT _symbol MATCHES "^(_init|_fini|_edata|_end|__bss_start)$")
      list(APPEND _foreign "${_symbol}")
    endif()
  endif()
endforeach()
if(_foreign OR _api EQUAL 0)
  message(FATAL_ERROR "c exports: ${LIBRARY} exports more than the C ABI (${_api} tendon_* functions): ${_foreign}")
endif()
message(STATUS "c exports: ${_api} tendon_* functions and nothing else")
