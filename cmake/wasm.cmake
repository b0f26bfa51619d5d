# cmake/wasm.cmake: what the WebAssembly build (Emscripten, scripts/wasm.sh) uses in place
# of the native build's find_package calls.
#
# Emscripten's sysroot does not search /usr/include (its own libc and libc++ are there, and
# the host's glibc headers must never be seen), so the header-only dependencies (xsimd,
# nlohmann-json, tinygltf) are reached through a folder of links to just those, made here
# in the build folder. No Threads and no oneTBB: the module is single-threaded (the World's
# own no-task-system path). TENDON_WASM_SIMD picks the kernels: ON, xsimd's sse4_2 batches
# compiled to SIMD128 through Emscripten's SSE headers (-msimd128 -msse4.2); OFF, the scalar
# kernels only, for a browser without SIMD128.
# One module, linked statically: no position-independent code (its GOT indirections would
# only cost size and time).
set(CMAKE_POSITION_INDEPENDENT_CODE OFF)
option(TENDON_WASM_SIMD "WebAssembly: the SSE4.2 kernels through SIMD128 (OFF: scalar kernels only)" ON)
set(TENDON_HOST_INCLUDE "/usr/include" CACHE PATH "Where the host's xsimd, nlohmann and tiny_gltf.h headers are")
set(_tendon_links ${CMAKE_BINARY_DIR}/host_headers)
file(MAKE_DIRECTORY ${_tendon_links})
foreach(_entry xsimd nlohmann tiny_gltf.h)
  if(NOT EXISTS ${TENDON_HOST_INCLUDE}/${_entry})
    message(FATAL_ERROR "WebAssembly build: ${TENDON_HOST_INCLUDE}/${_entry} is missing (scripts/setup.sh installs "
                        "libxsimd-dev, nlohmann-json3-dev and libtinygltf-dev)")
  endif()
  if(NOT EXISTS ${_tendon_links}/${_entry})
    file(CREATE_LINK ${TENDON_HOST_INCLUDE}/${_entry} ${_tendon_links}/${_entry} SYMBOLIC)
  endif()
endforeach()
add_library(xsimd INTERFACE IMPORTED)
set_target_properties(xsimd PROPERTIES INTERFACE_INCLUDE_DIRECTORIES ${_tendon_links}
  INTERFACE_SYSTEM_INCLUDE_DIRECTORIES ${_tendon_links})
add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED)
set_target_properties(nlohmann_json::nlohmann_json PROPERTIES INTERFACE_INCLUDE_DIRECTORIES ${_tendon_links}
  INTERFACE_SYSTEM_INCLUDE_DIRECTORIES ${_tendon_links})
set(TENDON_TINYGLTF_INCLUDE ${_tendon_links} CACHE PATH "tiny_gltf.h (a link to the host's)" FORCE)
foreach(_off TENDON_BUILD_TESTS TENDON_BUILD_BENCH TENDON_BUILD_DEMO TENDON_BUILD_TBB TENDON_SHARED TENDON_FUZZ)
  if(${_off})
    message(FATAL_ERROR "WebAssembly build: ${_off} must be OFF (scripts/wasm.sh configures it)")
  endif()
endforeach()
