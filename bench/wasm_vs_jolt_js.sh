#!/usr/bin/env bash
# Tendon's WebAssembly build against JoltPhysics.js on Jolt's ragdoll pile scene, in Node,
# single-threaded, side by side on this machine, in alternating rounds (issue 39 §6):
#   Tendon scalar module   against jolt-physics' default build (scalar WebAssembly)
#   Tendon SIMD128 module  against jolt-physics' wasm-multithread build at 1 thread (SIMD128)
# Tendon runs bench/pile_scene.h (BM_RagdollPiles' scene and measures, 8 substeps) through
# ports/wasm/piles_driver.cpp; Jolt runs ../shared/peers/jolt-js/ragdoll-piles.mjs (its
# README: the same scene, Jolt's settings), copied to build/peers/jolt-js with its lock file.
# Each prints one JSON line; this prints them and the paired ratios per round.
#   bash bench/wasm_vs_jolt_js.sh [ROUNDS]    (default 3; needs ../shared, npm, and network for npm ci)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-3}"
shared="${TENDON_SHARED_DATA:-$(cd .. && pwd)/shared/data}"
peer_src="$(dirname "$shared")/peers/jolt-js"
[[ -f "$peer_src/ragdoll-piles.mjs" ]] || { echo "wasm_vs_jolt_js: no $peer_src" >&2; exit 1; }
bash scripts/wasm.sh --bench >/dev/null
peer=build/peers/jolt-js
mkdir -p "$peer"
cp "$peer_src/package.json" "$peer_src/package-lock.json" "$peer_src/ragdoll-piles.mjs" "$peer/"
[[ -d "$peer/node_modules/jolt-physics" ]] || (cd "$peer" && npm ci --silent --no-audit --no-fund)
tendon() { node --no-experimental-fetch "build/wasm/$1/tendon_piles.js" "$shared" "$2"; }
jolt() { node "$peer/ragdoll-piles.mjs" --data "$shared/jolt-human" "$@" 2>/dev/null; }
field() { node -e 'const o = JSON.parse(process.argv[1]); console.log(o[process.argv[2]]);' "$1" "$2"; }
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, node $(node --version)"
for ((r = 1; r <= rounds; ++r)); do
  ts=$(tendon scalar scalar)
  js=$(jolt)
  tv=$(tendon simd simd)
  jv=$(jolt --flavour wasm-multithread --threads 1)
  echo "round $r"
  echo "  tendon scalar: $ts"
  echo "  jolt default:  $js"
  echo "  tendon simd:   $tv"
  echo "  jolt simd:     $jv"
  node -e '
    const [ts, js, tv, jv] = process.argv.slice(1).map((s) => JSON.parse(s));
    const r = (a, b) => (a.steps_per_s / b.steps_per_s).toFixed(2);
    console.log(`  steps/s: tendon scalar ${ts.steps_per_s}, jolt default ${js.steps_per_s}: ${r(ts, js)}x; ` +
                `tendon simd ${tv.steps_per_s}, jolt simd ${jv.steps_per_s}: ${r(tv, jv)}x`);' "$ts" "$js" "$tv" "$jv"
done
