#!/usr/bin/env bash
# Builds the libFuzzer targets (clang 14, AddressSanitizer + UndefinedBehaviorSanitizer) and
# runs each in two passes; CI runs this after the tests.
#   bash scripts/fuzz.sh [RUNS] [TARGET...]   default 20000 executions per target, every target
#
# Pass 1, the replay: RUNS executions (fuzz_world: a quarter of them) from the seed corpus with libFuzzer's seed fixed
# (TENDON_FUZZ_SEED, 1 by default), so the same inputs run on every machine and a run that
# passed here passes there. A finding stops the script with the input in
# build/fuzz/findings/.
#
# Pass 2, the exploration: TENDON_FUZZ_EXPLORE_SECONDS (10 by default; 0 skips it) of each
# target with a fresh seed (TENDON_FUZZ_EXPLORE_SEED, or one drawn here and printed), from
# the corpus pass 1 grew, so CI keeps looking where the fixed seed has already been. Its
# log (with the seed) and any crashing input go to build/artifacts/fuzz/, which CI keeps.
# A finding here is REPORTED, not fatal: the run prints it and keeps the reproducer, but
# CI passes (TENDON_FUZZ_EXPLORE_FATAL=1 makes it fail). A fresh seed can find a bug that
# the commit under test did not introduce; failing on it would make every commit's CI a
# lottery, while pass 1 stays the gate that every commit must pass. What exploration finds
# is triaged from the artefact:
#   build/fuzz/tests/fuzz/tendon_fuzz_TARGET build/artifacts/fuzz/TARGET-crash-...
# made a named regression test (tests/hostile_input_test.cpp, or the target's corpus
# under tests/fuzz/corpus/TARGET/regression_*), fixed, and the fixed-seed pass replays it
# from then on.
#
# The loaders also take the real assets in ../shared/data (TENDON_SHARED_DATA): those under
# 128 KB behind every loader's selector byte, and a bigger .vrm / .glb (Godette, 591 KB)
# behind the glTF importer's and the VRM skeleton's, so the importer, Build, Bind, a
# knock-down and Step see a real avatar (-max_len grows to hold it).
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-20000}"
shift || true
targets=("$@")
((${#targets[@]})) || targets=(loaders build world api avatar c_abi snapshot net_pose)
seed="${TENDON_FUZZ_SEED:-1}"
explore_seconds="${TENDON_FUZZ_EXPLORE_SECONDS:-10}"
explore_fatal="${TENDON_FUZZ_EXPLORE_FATAL:-0}"
explore_seed="${TENDON_FUZZ_EXPLORE_SEED:-$(( ($(date +%s) ^ $$ ^ RANDOM) % 2147483646 + 1 ))}"
export TENDON_SETUP_CLANG=1
bash scripts/setup.sh
cmake -S . -B build/fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_C_COMPILER=clang-14 \
  -DTENDON_SANITIZE=address,undefined -DTENDON_FUZZ=ON -DTENDON_BUILD_TESTS=OFF -DTENDON_BUILD_BENCH=OFF \
  -DTENDON_BUILD_DEMO=OFF -DTENDON_BUILD_TBB=OFF >/dev/null
jobs=$(nproc 2>/dev/null || echo 2)
cmake --build build/fuzz -j "$jobs" --target "${targets[@]/#/tendon_fuzz_}"
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1
artifacts=build/artifacts/fuzz
mkdir -p build/fuzz/findings "$artifacts"
shared="${TENDON_SHARED_DATA:-../shared/data}"

# Runs one pass of one target; prints its figures, and on a finding its log's tail.
fuzz_pass() {  # target pass-name log artifact-prefix libFuzzer-args...
  local target=$1 pass=$2 log=$3 prefix=$4
  shift 4
  local start=$SECONDS rc
  set +e
  ./build/fuzz/tests/fuzz/tendon_fuzz_$target -timeout=20 -rss_limit_mb=2048 -max_len="$max_len" \
    -artifact_prefix="$prefix" -print_final_stats=1 "$@" >"$log" 2>&1
  rc=$?
  set -e
  local execs
  execs=$(grep -oE '^stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo "?")
  echo "fuzz: tendon_fuzz_$target $pass: $execs executions in $((SECONDS - start)) s (rc $rc)"
  if ((rc != 0)); then
    tail -n 40 "$log" >&2
    echo "fuzz: tendon_fuzz_$target $pass found something; the input is under $prefix*" >&2
    return 1
  fi
}

failed=0
for target in "${targets[@]}"; do
  work="build/fuzz/corpus/$target"
  rm -rf "$work" && mkdir -p "$work"
  cp tests/fuzz/corpus/$target/* "$work"/ 2>/dev/null || true
  max_len=4096
  if [[ "$target" == loaders && -d "$shared" ]]; then
    # The real assets, each behind every loader's selector byte (fuzz_loaders.cpp).
    i=0
    while IFS= read -r -d '' f; do
      if (($(stat -c %s "$f") < 131072)); then
        for sel in 0 1 2 3 4 5; do printf "\\x0$sel" | cat - "$f" >"$work/asset_${i}_$sel"; done
      elif [[ "$f" == *.vrm || "$f" == *.glb ]]; then
        # A big avatar only where it is a real input: the glTF importer (4) and the VRM
        # skeleton (3). (The big Jolt animations add nothing the small ones don't reach, and
        # would slow every execution that mutates them.)
        for sel in 3 4; do printf "\\x0$sel" | cat - "$f" >"$work/asset_${i}_$sel"; done
      fi
      i=$((i + 1))
    done < <(find "$shared" -type f \( -name '*.json' -o -name '*.vrm' -o -name '*.glb' -o -name '*.gltf' \) -print0 | sort -z)
    # Room for the largest seed (Godette with its selector byte); mutations start small
    # (libFuzzer's len_control) and grow toward this only where coverage does.
    max_len=$(find "$work" -type f -printf '%s\n' | sort -n | tail -n 1)
    ((max_len < 131072)) && max_len=131072
  fi
  target_runs=$runs
  # fuzz_world builds and steps a World per input (about 13 ms under ASan, 254 s for 20,000
  # in CI): it replays a quarter of RUNS (TENDON_FUZZ_WORLD_RUNS overrides), so CI's whole
  # run stays under its hour; its exploration still runs the full time.
  [[ "$target" == world ]] && target_runs="${TENDON_FUZZ_WORLD_RUNS:-$((runs / 4))}"
  fuzz_pass "$target" "replay (seed $seed)" "build/fuzz/$target.log" "build/fuzz/findings/$target-" \
    -seed="$seed" -runs="$target_runs" "$work" || exit 1
  if ((explore_seconds > 0)); then
    # The corpus pass 1 grew, and a fresh seed; findings (and the log that names the seed)
    # are kept as artefacts.
    log="$artifacts/$target.explore.log"
    echo "fuzz: tendon_fuzz_$target exploring for $explore_seconds s with seed $explore_seed (log: $log)"
    echo "explore seed $explore_seed, $explore_seconds s, commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')" >"$log.seed"
    if ! fuzz_pass "$target" "exploration (seed $explore_seed)" "$log" "$artifacts/$target-" \
      -seed="$explore_seed" -max_total_time="$explore_seconds" "$work"; then
      cat "$log.seed" >>"$log"
      failed=1  # the other targets still explore; the run fails at the end
    fi
  fi
done
if ((failed)); then
  echo "fuzz: THE EXPLORATION FOUND SOMETHING: reproducers and logs in $artifacts/ (seed $explore_seed)" >&2
  if [[ "$explore_fatal" == 1 ]]; then exit 1; fi
  echo "fuzz: reported, not fatal (TENDON_FUZZ_EXPLORE_FATAL=1 makes it fail); the replay passed" >&2
  exit 0
fi
echo "fuzz: no findings"
