#!/usr/bin/env bash
# Instructions per World::Step (callgrind's inclusive Ir over its calls) for one benchmark:
# repeatable where timings are not, so a refactor can show it moved the counts by < 1%.
#   bash scripts/instructions_per_step.sh build/release/bench/tendon_bench 'BM_VrmAvatars/models:1/manual_time$'
# A third argument names another function to count (a regex on callgrind's name), e.g.
# 'WorldAccess::SolveOnly' for BM_ChainStep, which times the solve alone.
# Needs valgrind (apt-get install valgrind). Prints "<filter> <calls> <Ir per call>".
set -euo pipefail
bench=$1
filter=$2
function=${3:-'tendon::World::Step\(float\)$'}
out=$(mktemp -d)
valgrind --tool=callgrind --callgrind-out-file="$out/cg.out" "$bench" --benchmark_filter="$filter" \
  --benchmark_min_time=0.01 >/dev/null 2>"$out/log" || { cat "$out/log" >&2; exit 1; }
python3 - "$out/cg.out" "$filter" "$function" <<'PY'
import re, sys
names, steps, ir = {}, 0, 0
lines = open(sys.argv[1]).read().split("\n")
for i, line in enumerate(lines):
    # A function's name is given once, with its id, in whichever fn= or cfn= line comes first.
    m = re.match(r"(c?)fn=\((\d+)\)(?: (.*))?$", line)
    if not m:
        continue
    if m.group(3):
        names[m.group(2)] = m.group(3)
    if m.group(1) != "c":
        continue
    m = re.match(r"cfn=\((\d+)\)", line)
    if not re.search(sys.argv[3], names.get(m.group(1), "")):
        continue
    calls = re.match(r"calls=(\d+)", lines[i + 1])
    cost = lines[i + 2].split()
    steps += int(calls.group(1))
    ir += int(cost[1])
print(f"{sys.argv[2]} {steps} {ir / max(steps, 1):.0f}")
PY
rm -rf "$out"
