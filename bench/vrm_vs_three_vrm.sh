#!/usr/bin/env bash
# Tendon's kVrm avatars against three-vrm 3.5.5, side by side on this machine, in alternating
# rounds: three-vrm's springBoneManager.update(dt) per joint (bench-vrm.mjs from
# ../shared/peers/three-vrm, in Node) and BM_VrmAvatars/models:N (a whole World::Step per
# frame, one thread; with FrameStats' phase times and without), for N = 1, 10, 100 Godettes.
# Prints each round, the median ratio and the range of the rounds' paired ratios.
#   bash bench/vrm_vs_three_vrm.sh [rounds=3]     (after scripts/build.sh; needs node and npm)
# HAIRY=1 runs issue 41's lone many-strand head instead (bench/hairy_head_gltf.py writes it for
# three-vrm; BM_VrmHairyHead/models:N builds the same springs): Tendon's "phase times on"
# column is then its default layout (/strand_lanes) and the other column /one_lane.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-3}"
shared="${TENDON_SHARED:-../shared}"
model="$shared/data/vrm/godette/Godette_vrm_v4.vrm"
bench=build/release/bench/tendon_bench
[[ -x "$bench" ]] || { echo "build first: bash scripts/build.sh" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp -r "$shared/peers/three-vrm"/. "$work"/
rm -rf "$work/node_modules"
(cd "$work" && npm ci --silent --no-audit --no-fund >/dev/null)
export TENDON_SHARED_DATA="$shared/data"
bm=BM_VrmAvatars on=manual_time off=untimed_phases
export LABEL_ON="phase times on" LABEL_OFF="time_phases off"
if [[ "${HAIRY:-0}" == 1 ]]; then
  model="$work/hairy-head.gltf"
  python3 bench/hairy_head_gltf.py "$model"
  bm=BM_VrmHairyHead on=strand_lanes off=one_lane
  export LABEL_ON="lane per strand" LABEL_OFF="one lane"
fi
# Each round: three-vrm, then Tendon with FrameStats' phase times (the default), then Tendon
# with WorldSettings::time_phases off (/untimed_phases: no cycle-counter reads in Step).
tendon_ns() {
  "$bench" --benchmark_filter="$bm/models:$1/manual_time\$" --benchmark_min_time=1 \
    --benchmark_format=json 2>/dev/null | python3 -c 'import json,sys
b=[x for x in json.load(sys.stdin)["benchmarks"] if x.get("run_type")=="iteration"][0]
print(b["ns_per_joint"])'
}
for n in 1 10 100; do
  three=() tendon=() untimed=()
  for ((r = 0; r < rounds; r++)); do
    frames=$((2000 / n > 50 ? 2000 / n : 50))  # each of bench-vrm's 2 x 5 timed runs; about 2000 avatar-frames
    us=$(node "$work/bench-vrm.mjs" "$model" "$n" "$frames" | grep 'springBoneManager' |
         sed -E 's/.*"usPerJointMedian":([0-9.]+).*/\1/')
    if [[ "$bm" == BM_VrmAvatars ]]; then ns=$(tendon_ns "$n"); else ns=$(tendon_ns "$n/$on"); fi
    ns_untimed=$(tendon_ns "$n/$off")
    three+=("$us") tendon+=("$ns") untimed+=("$ns_untimed")
    printf 'models:%s round %s: three-vrm %s us/joint, Tendon %.1f ns/joint (%.1f with %s)\n' \
      "$n" "$r" "$us" "$ns" "$ns_untimed" "$LABEL_OFF"
  done
  python3 - "$n" "${three[*]}" "${tendon[*]}" "${untimed[*]}" <<'PY'
import statistics, sys
n = sys.argv[1]
three, tendon, untimed = ([float(x) for x in a.split()] for a in sys.argv[2:5])
t = statistics.median(three)
import os
for label, side in ((os.environ["LABEL_ON"], tendon), (os.environ["LABEL_OFF"], untimed)):
    k = statistics.median(side)
    paired = sorted(1000 * a / b for a, b in zip(three, side))
    print(f"models:{n}: three-vrm {t:.3f} us/joint, Tendon {k:.1f} ns/joint (kVrm, whole Step, {label}): "
          f"{1000 * t / k:.1f}x; paired per round {paired[0]:.1f}-{paired[-1]:.1f}x")
PY
done
