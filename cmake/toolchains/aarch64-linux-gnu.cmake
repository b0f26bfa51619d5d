# Cross-compiling for ARM64 Linux with Debian's g++-aarch64-linux-gnu; tests run under
# qemu-aarch64 (Debian's qemu-user) through CMAKE_CROSSCOMPILING_EMULATOR, which ctest and
# gtest_discover_tests use. The target's libraries (GoogleTest, oneTBB) come from Debian's
# arm64 packages (dpkg --add-architecture arm64); header-only ones from /usr/include.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64;-L;/usr/aarch64-linux-gnu)
# xsimd is header-only, but Debian's libxsimd-dev keeps its CMake config under the build
# machine's multiarch directory: the target uses that one.
if(NOT xsimd_DIR AND EXISTS /usr/lib/x86_64-linux-gnu/cmake/xsimd)
  set(xsimd_DIR /usr/lib/x86_64-linux-gnu/cmake/xsimd CACHE PATH "xsimd's CMake config (header-only)")
endif()
