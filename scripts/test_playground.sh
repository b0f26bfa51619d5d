#!/usr/bin/env bash
# The three.js playground in a real browser: Debian's chromium driven by playwright-core
# (npm, pinned by ports/three/package-lock.json). Assembles build/playground/
# (scripts/playground.sh: the WebAssembly build, three, three-vrm, Godette), then checks
# the page loads with no console errors on the SIMD kernel, Godette's hair swings, a scripted
# mouse drag grabs and throws an avatar that goes down and gets up again, and the folder
# loads from file:// too (before that, the port's Node test: ports/three/test/port.test.mjs); the screenshot is CI's artefact: build/artifacts/playground.png
# (TENDON_ARTIFACTS moves it). Installs chromium, nodejs and npm with apt-get when they are
# missing and it runs as root.
#   bash scripts/test_playground.sh        (after scripts/test_wasm.sh, which builds the module)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/need_browser.sh
NeedBrowser test_playground
(cd ports/three && npm ci --silent --no-audit --no-fund)
bash scripts/playground.sh build/playground
# The port in Node first (bone mapping by node index, refusals, hair, write-back): fast, and
# it names a mapping fault before the browser would only show a wrong pose.
wasm_dir="$(realpath "${TENDON_WASM_DIR:-build/wasm}")"
data_dir="$(realpath "${TENDON_SHARED_DATA:-../shared/data}")"
(cd ports/three && TENDON_WASM_DIR="$wasm_dir" TENDON_SHARED_DATA="$data_dir" node --test test/port.test.mjs)
artifacts="${TENDON_ARTIFACTS:-build/artifacts}"
mkdir -p "$artifacts"
node ports/three/test/playground.test.mjs build/playground "$artifacts/playground.png"
