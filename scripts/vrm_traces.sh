#!/usr/bin/env bash
# Regenerates the three-vrm reference traces the kVrm conformance test compares against
# (tests/vrm_conformance_test.cpp), with three-vrm 3.5.5 in Node from
# ../shared/peers/three-vrm (copied to a temporary folder: shared/ is read-only).
#   bash scripts/vrm_traces.sh           rewrite tests/data/three-vrm/*.jsonl
#   bash scripts/vrm_traces.sh --check   regenerate and fail when they differ from the committed ones
# Needs node and npm (Node 20); .ci/run runs --check when they are there.
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-write}"
shared="${TENDON_SHARED:-../shared}"
peer="$shared/peers/three-vrm"
data="$shared/data/vrm"
[[ -d "$peer" && -d "$data" ]] || { echo "vrm_traces: $peer or $data missing" >&2; exit 1; }
command -v node >/dev/null && command -v npm >/dev/null || { echo "vrm_traces: node and npm are needed" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp -r "$peer"/. "$work"/
rm -rf "$work/node_modules"
(cd "$work" && npm ci --silent --no-audit --no-fund >/dev/null)
out="$work/out"
mkdir -p "$out"
node "$work/golden-trace.mjs" "$data/godette/Godette_vrm_v4.vrm" > "$out/godette.jsonl"
for m in sphere plane inside; do
  node "$work/golden-trace.mjs" "$data/three-vrm-springbone-examples/$m-collider.gltf" > "$out/$m-collider.jsonl"
done
if [[ "$mode" == --check ]]; then
  for f in "$out"/*.jsonl; do
    cmp -s "$f" "tests/data/three-vrm/$(basename "$f")" || { echo "vrm_traces: $(basename "$f") differs from three-vrm's" >&2; exit 1; }
  done
  echo "vrm_traces: the committed traces are three-vrm's"
else
  mkdir -p tests/data/three-vrm
  cp "$out"/*.jsonl tests/data/three-vrm/
  echo "vrm_traces: wrote $(ls "$out" | wc -l) traces to tests/data/three-vrm"
fi
