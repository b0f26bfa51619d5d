#!/usr/bin/env bash
# Builds the libFuzzer targets (clang 14, AddressSanitizer + UndefinedBehaviorSanitizer) and
# runs each a fixed number of executions from its seed corpus; CI runs this after the tests.
#   bash scripts/fuzz.sh [RUNS]      default 20000 executions per target
# CI's run is reproducible: libFuzzer's seed is fixed (TENDON_FUZZ_SEED, 1 by default), so a
# run that passed here passes there. Set TENDON_FUZZ_SEED=0 for a random seed when
# exploring (libFuzzer then picks one and prints it).
# A finding stops the script with the input saved in build/fuzz/findings/; make it a named
# regression test (tests/hostile_input_test.cpp) before fixing it.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-20000}"
seed="${TENDON_FUZZ_SEED:-1}"
export TENDON_SETUP_CLANG=1
bash scripts/setup.sh
cmake -S . -B build/fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-14 \
  -DTENDON_SANITIZE=address,undefined -DTENDON_FUZZ=ON -DTENDON_BUILD_TESTS=OFF -DTENDON_BUILD_BENCH=OFF \
  -DTENDON_BUILD_DEMO=OFF -DTENDON_BUILD_TBB=OFF >/dev/null
jobs=$(nproc 2>/dev/null || echo 2)
cmake --build build/fuzz -j "$jobs" --target tendon_fuzz_loaders tendon_fuzz_build tendon_fuzz_world
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1
mkdir -p build/fuzz/findings
shared="${TENDON_SHARED_DATA:-../shared/data}"
for target in loaders build world; do
  work="build/fuzz/corpus/$target"
  rm -rf "$work" && mkdir -p "$work"
  cp tests/fuzz/corpus/$target/* "$work"/ 2>/dev/null || true
  seeds=("$work")
  if [[ "$target" == loaders && -d "$shared" ]]; then
    # The real assets, each behind every loader's selector byte.
    i=0
    while IFS= read -r -d '' f; do
      for sel in 0 1 2 3 4; do printf "\\x0$sel" | cat - "$f" > "$work/asset_${i}_$sel"; done
      i=$((i + 1))
    done < <(find "$shared" -type f \( -name '*.json' -o -name '*.vrm' -o -name '*.glb' -o -name '*.gltf' \) -size -128k -print0)
  fi
  echo "fuzz: tendon_fuzz_$target, $runs executions"
  set +e
  max_len=4096
  [[ "$target" == loaders ]] && max_len=131072
  ./build/fuzz/tests/fuzz/tendon_fuzz_$target -seed="$seed" -runs="$runs" -max_len=$max_len -timeout=20 -rss_limit_mb=2048 \
    -artifact_prefix=build/fuzz/findings/$target- -print_final_stats=1 "${seeds[@]}" > build/fuzz/$target.log 2>&1
  rc=$?
  set -e
  grep -E '^(Done [0-9]+ runs|stat::number_of_executed_units|INFO: seed corpus)' build/fuzz/$target.log || true
  if ((rc != 0)); then
    tail -n 40 build/fuzz/$target.log >&2
    echo "fuzz: tendon_fuzz_$target failed (rc $rc); inputs in build/fuzz/findings/" >&2
    exit 1
  fi
done
echo "fuzz: no findings"
