#!/usr/bin/env bash
# bench/run-matrix.sh: tendon_bench for every instruction set this CPU has and for 1..N
# workers, as Google Benchmark JSON per machine, then docs/performance.md's matrix tables from them.
#
#   bash bench/run-matrix.sh [--machine NAME] [--workers N] [--min-time S] [--tables-only]
#
# 1. tendon-devicebench calibrates the machine (3 s): its tier, and which instruction sets
#    it runs. The profile goes to bench/results/<machine>/device-profile.json.
# 2. For each instruction set (TENDON_ISA=<isa>, which World's kAuto then resolves to):
#    tendon_bench over the matrix's benchmarks, every /workers:N axis from 1 to N
#    (TENDON_BENCH_WORKERS=N; N defaults to the core count), with --benchmark_context
#    keys tier, isa, workers, machine and commit, into bench/results/<machine>/<isa>.json.
# 3. bench/matrix_tables.py rewrites docs/performance.md's tables between the matrix markers from every
#    bench/results/*/*.json that has those keys: the tables are never typed by hand.
# Needs build/release (bash scripts/test.sh or scripts/build.sh). Benchmarks that read
# ../shared/data (piles, the demo frame, Godette) skip without it; set TENDON_SHARED_DATA.
set -euo pipefail
cd "$(dirname "$0")/.."
machine=""
workers=$(nproc 2>/dev/null || echo 2)
min_time=0.2
tables_only=0
while (($#)); do
  case "$1" in
    --machine) machine="$2"; shift 2 ;;
    --workers) workers="$2"; shift 2 ;;
    --min-time) min_time="$2"; shift 2 ;;
    --tables-only) tables_only=1; shift ;;
    *) echo "unknown option $1 (see the header of $0)" >&2; exit 2 ;;
  esac
done
if ((tables_only)); then
  exec python3 bench/matrix_tables.py docs/performance.md bench/results
fi
bench=build/release/bench/tendon_bench
devicebench=build/release/ports/devicebench/tendon-devicebench
for tool in "$bench" "$devicebench"; do
  [[ -x "$tool" ]] || { echo "build first (bash scripts/test.sh): $tool is missing" >&2; exit 1; }
done
export TENDON_SHARED_DATA="${TENDON_SHARED_DATA:-../shared/data}"
cpu=$(grep -m1 -E '^(model name|Model|Hardware)' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//')
cpu=${cpu:-unknown}
if [[ -z "$machine" ]]; then
  # "AMD EPYC" on 2 cores -> amd-epyc-2core
  machine="$(tr '[:upper:]' '[:lower:]' <<<"$cpu" | sed -E 's/\((r|tm)\)//g; s/ cpu.*//; s/@.*//; s/[^a-z0-9]+/-/g; s/^-|-$//g')-$(nproc)core"
fi
out="bench/results/$machine"
mkdir -p "$out"
rm -f "$out"/*.json  # one run per machine: no instruction set left over from an earlier one
log=$(mktemp)
trap 'rm -f "$log"' EXIT
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
# Dirty when the code differs from the commit (this run's outputs, docs/performance.md and bench/results, aside).
[[ -z "$(git status --porcelain --untracked-files=no -- . ':!docs/performance.md' ':!bench/results' 2>/dev/null)" ]] || commit="$commit+dirty"

"$devicebench" --workers "$workers" --out "$out/device-profile.json" | tail -3
read -r tier isas < <(python3 - "$out/device-profile.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
isas = []
for m in p["measurements"]:
    if m["isa"] not in isas:
        isas.append(m["isa"])
print(p["tier"], " ".join(isas))
PY
)
echo "run-matrix: machine $machine ($cpu), tier $tier, instruction sets: $isas, workers 1..$workers"

# The matrix: the chain solve in and out of cache, the writeback, a lone ragdoll block and a
# heap, Jolt's pile scene, the demo's frame, and Godette avatars.
filter='^BM_ChainStep/simd/nodes:8/chains:(1024|8192)/|^BM_ChainWriteback/|^BM_RagdollStep/|^BM_RagdollPiles/simd/workers:[0-9]+/iter|^BM_DemoFrame/|^BM_VrmAvatars/models:(1|100)/manual'
for isa in $isas; do
  file="$out/$(tr '+.' '__' <<<"$isa").json"
  echo "run-matrix: $isa -> $file"
  TENDON_ISA="$isa" TENDON_BENCH_WORKERS="$workers" "$bench" \
    --benchmark_filter="$filter" --benchmark_min_time="$min_time" \
    --benchmark_context="tier=$tier,isa=$isa,workers=$workers,machine=$machine,commit=$commit,cpu=${cpu//,/ }" \
    --benchmark_out="$file" --benchmark_out_format=json >"$log" 2>&1 || { tail -20 "$log" >&2; exit 1; }
done
python3 bench/matrix_tables.py docs/performance.md bench/results
echo "run-matrix: wrote $out and docs/performance.md's matrix tables"
