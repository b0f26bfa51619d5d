#!/usr/bin/env bash
# Builds Tendon and runs every test. On a fresh Debian 12 machine this is all the set-up.
#   bash scripts/test.sh                      release build, all tests
#   bash scripts/test.sh --sanitize address,undefined [--clang]
#   bash scripts/test.sh --sanitize thread    (the tests that use threads)
set -euo pipefail
cd "$(dirname "$0")/.."
sanitize=""
compiler=()
name=release
while (($#)); do
  case "$1" in
    --sanitize) sanitize="$2"; shift 2 ;;
    --clang) export TENDON_SETUP_CLANG=1; compiler=(-DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_C_COMPILER=clang-14); name=clang; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
bash scripts/setup.sh
build_type=Release
filter=(-LE soak)  # the soak runs on its own (.ci/run, or: ctest --test-dir build/release -L soak)
if [[ -n "$sanitize" ]]; then
  name="$name-${sanitize//,/-}"
  build_type=RelWithDebInfo
  if [[ "$sanitize" == thread ]]; then filter=(-L threads -LE soak); fi
fi
jobs=$(nproc 2>/dev/null || echo 2)
# The AddressSanitizer build also checks host buffers on every call (TENDON_DEBUG_VALIDATION).
cmake -S . -B "build/$name" -DCMAKE_BUILD_TYPE=$build_type -DTENDON_SANITIZE="$sanitize" \
  -DTENDON_DEBUG_VALIDATION=$([[ "$sanitize" == *address* ]] && echo ON || echo OFF) \
  -DTENDON_BUILD_BENCH=$([[ -n "$sanitize" ]] && echo OFF || echo ON) "${compiler[@]}"
targets=()
# ThreadSanitizer runs only the threads-labelled tests: build their executable alone (the
# rest of the tree is built and run under the other configurations; ctest skips what was
# not built, which has no threads label).
if [[ "$sanitize" == thread ]]; then targets=(--target tendon_thread_tests); fi
cmake --build "build/$name" -j "$jobs" "${targets[@]}"
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export ASAN_OPTIONS=detect_leaks=1
ctest --test-dir "build/$name" --output-on-failure -j "$jobs" "${filter[@]}"
# docs/performance.md's matrix tables are bench/results' files, never typed by hand (bench/run-matrix.sh).
python3 bench/matrix_tables.py --check docs/performance.md bench/results
