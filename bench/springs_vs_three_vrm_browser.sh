#!/usr/bin/env bash
# Springs against three-vrm in Chromium (issue 39, §6): the playground's bench modes on the
# same page. springs:N: N Godettes bound as spring chains only, alternating rounds of 300
# frames of three-vrm's springBoneManager.update(dt) and the port's whole update (pose in,
# Tendon's WebAssembly step, pose out), ms per frame and ns per joint (medians of 5 rounds).
# frame:N: the playground's whole frame (walk, port, render) at N avatars, with the browser's
# own timing (JavaScript time per frame and the requestAnimationFrame interval; headless
# Chromium renders with SwiftShader here, so render-bound figures are the CPU's).
#   bash bench/springs_vs_three_vrm_browser.sh [springs:10 springs:10:scalar frame:50 ...]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=("$@")
((${#runs[@]})) || runs=(springs:1 springs:10 springs:10:scalar frame:50)
[[ -d ports/three/node_modules/playwright-core ]] || (cd ports/three && npm ci --silent --no-audit --no-fund)
bash scripts/playground.sh build/playground >/dev/null
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
node ports/three/test/bench_browser.mjs build/playground "${runs[@]}"
