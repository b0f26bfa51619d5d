#!/usr/bin/env bash
# The shared configuration (-DTENDON_SHARED=ON): libtendon.so and libtendon_tbb.so export
# the API and nothing else (every exported symbol is tendon::..., none tendon::detail::...
# but the misuse abort that the inline Result::value() calls),
# tendon-demo runs on them (with and without --overlap), and an installed consumer (C++
# with and without oneTBB, C, pkg-config, the Python package) builds and runs against them. The tests
# and benchmarks reach into the kernel, so they run in the static build (scripts/test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
build=build/shared
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DTENDON_SHARED=ON -DTENDON_BUILD_TESTS=OFF -DTENDON_BUILD_BENCH=OFF
cmake --build "$build" -j "$jobs"
status=0
for lib in "$build/kernel/libtendon.so" "$build/kernel/libtendon_tbb.so"; do
  symbols=$(nm -D --defined-only "$lib" | awk '{print $3}' | c++filt)
  count=$(grep -c '^tendon::' <<<"$symbols" || true)
  foreign=$(grep -v '^tendon::' <<<"$symbols" | grep -vxE '_init|_fini|_edata|_end|__bss_start' || true)
  # The one internal name the API needs: what Result::value() (inline) calls on misuse.
  internal=$(grep '^tendon::detail::' <<<"$symbols" | grep -v '^tendon::detail::AbortOnValueOfError(' || true)
  if [[ -n "$foreign$internal" || "$count" -eq 0 ]]; then
    echo "$lib exports more than the API:" >&2
    printf '%s\n' "$foreign" "$internal" | head -20 >&2
    status=1
  else
    echo "$lib: $count symbols, all tendon:: API"
  fi
done
[[ $status -eq 0 ]] || exit 1
demo="$build/ports/demo/tendon-demo"
ldd "$demo" | grep -q 'libtendon\.so' || { echo "tendon-demo does not link libtendon.so" >&2; exit 1; }
"$demo" --seconds 2 --workers 2 --trace '' >/dev/null
"$demo" --seconds 2 --workers 2 --trace '' --overlap >/dev/null
echo "tendon-demo ran on the shared libraries (Step and --overlap)"
cmake -DBUILD_DIR="$PWD/$build" -DSOURCE_DIR="$PWD/tests/consumer" -DWORK_DIR="$PWD/$build/consumer" -DCXX="$(command -v g++)" \
  -DCC="$(command -v gcc)" -DPYTHON="$(command -v python3)" -DPYTHON_PACKAGE_TEST="$PWD/ports/python/tests/test_tendon.py" \
  -P tests/consumer/run_consumer.cmake
echo "the installed shared package builds and runs its consumers"
