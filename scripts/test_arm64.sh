#!/usr/bin/env bash
# The whole test suite for ARM64 (NEON kernels), cross-compiled with Debian's
# g++-aarch64-linux-gnu and run under qemu-aarch64: SIMD-against-scalar comparisons,
# determinism and the C ABI's C host included. Installs what it needs (Debian packages,
# arm64 multiarch for GoogleTest and oneTBB). Nothing is timed under emulation.
#   bash scripts/test_arm64.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
need=()
for p in g++-aarch64-linux-gnu qemu-user libgtest-dev:arm64 libtbb-dev:arm64; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if ((${#need[@]})); then
  sudo_cmd=()
  if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" dpkg --add-architecture arm64
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build/arm64 -DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake \
  -DTENDON_BUILD_BENCH=OFF -DTENDON_BUILD_DEMO=OFF
cmake --build build/arm64 -j "$jobs"
# Left out under emulation (docs/arm64.md, "The whole suite on ARM64, in CI"):
# - the soak (minutes natively) and the oneTBB worker-count tests (label threads: qemu-user
#   emulates eight workers on two cores, over 5 minutes for one test; native CI runs them);
# - death tests (gtest forks; under qemu-user the child spins instead of aborting);
# - two ragdoll tests whose bounds hold for the AVX2 kernel's roundings only: on x86-64 the
#   scalar kernel fails them too (TENDON_FORCE_SCALAR=1: the human dropped on a plane
#   sleeps 415 frames after landing against a 180-frame bound);
# - the profiler tests: they step a busy world on 2 and 3 oneTBB workers (emulated workers
#   spin on two cores for many minutes, as the threaded tests would), and one compares zone
#   durations with FrameStats' within 5% (nothing is timed under emulation). The C host's
#   profiler-hook checks still run here;
# - the contact events', part drives' and broken drives' one-against-two oneTBB worker tests, for the same
#   reason (their emulated workers spun for over 6 minutes); their SIMD-against-scalar and
#   every other test run here; likewise the saved states' restores into Worlds at 2 and 8
#   oneTBB workers (their replays in one World run here);
# - the pile of twenty ragdolls' energy test (143 s under emulation, the slowest by far; it
#   runs in the release, ASan and soak configurations natively, and the NEON kernels'
#   agreement with their scalar references and the ARM64 pile goldens run here);
# - the saved states' 2- and 8-worker restores (oneTBB workers, as above);
# - following's one-against-two oneTBB worker test (over 7 minutes emulated; its pile and
#   every other follow test run here);
# - the stickman toggled 100,000 times (35 s emulated): a memory-growth check with nothing
#   of the instruction set in it, run natively in three configurations.
ctest --test-dir build/arm64 --output-on-failure -j "$jobs" -LE 'soak|threads' \
  -E 'DeathTest|RigidSolve.TheHumanDroppedOnAPlaneRestsAboveItAndSleeps|RigidSolve.TheHumanDroppedOnStairsRestsAboveThem|Profiler\.|ContactEvents.OrderAndContentAreTheSameAtOneAndTwoWorkers|PartDrive.ResultsDoNotDependOnTheWorkerCount|PartDriveEvents.OrderAndContentAreTheSameAtOneAndTwoWorkers|RagdollContacts.APileOfTwentyRagdollsSettlesWithoutGainingEnergy|Snapshot..*AtTwoAndEightWorkers|Character.TheStickmanTogglesAHundredThousandTimesWithoutGrowing|Follow.OneAndTwoWorkersGiveTheSameBits'
