#!/usr/bin/env bash
# Instructions per World::Step (callgrind's inclusive Ir over its calls) for one benchmark:
# repeatable where timings are not, so a refactor can show it moved the counts by < 1%.
#   bash scripts/instructions_per_step.sh build/release/bench/tendon_bench 'BM_VrmAvatars/models:1/manual_time$'
# Needs valgrind (apt-get install valgrind). Prints "<filter> <steps> <Ir per Step>".
set -euo pipefail
bench=$1
filter=$2
out=$(mktemp -d)
valgrind --tool=callgrind --callgrind-out-file="$out/cg.out" "$bench" --benchmark_filter="$filter" \
  --benchmark_min_time=0.01 >/dev/null 2>"$out/log" || { cat "$out/log" >&2; exit 1; }
python3 - "$out/cg.out" "$filter" <<'PY'
import re, sys
names, steps, ir = {}, 0, 0
lines = open(sys.argv[1]).read().split("\n")
for i, line in enumerate(lines):
    m = re.match(r"cfn=\((\d+)\)(?: (.*))?$", line)
    if not m:
        continue
    if m.group(2):
        names[m.group(1)] = m.group(2)
    if not re.search(r"tendon::World::Step\(float\)$", names.get(m.group(1), "")):
        continue
    calls = re.match(r"calls=(\d+)", lines[i + 1])
    cost = lines[i + 2].split()
    steps += int(calls.group(1))
    ir += int(cost[1])
print(f"{sys.argv[2]} {steps} {ir / max(steps, 1):.0f}")
PY
rm -rf "$out"
