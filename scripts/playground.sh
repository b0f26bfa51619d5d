#!/usr/bin/env bash
# Assembles Tendon's three.js playground as a static folder, build/playground/ (or $1):
# the page and its module (ports/three/playground), the port (ports/three/tendon-three.mjs),
# the npm modules it imports (three, @pixiv/three-vrm: ports/three's package-lock.json pins
# them; the page's import map points at the copies under vendor/), the WebAssembly build
# (build/wasm/: tendon.mjs, tendon_layouts.mjs and the simd/ and scalar/ builds it picks
# between; scripts/wasm.sh builds it when missing; TENDON_WASM_DIR points elsewhere), and
# Godette copied from ${TENDON_SHARED_DATA:-../shared/data}/vrm/ (never committed). Serve the
# folder (python3 -m http.server -d build/playground) or open
# its index.html from file:// where the browser allows it (Chromium:
# --allow-file-access-from-files).
#   bash scripts/playground.sh [OUT_FOLDER]
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-build/playground}"
data="${TENDON_SHARED_DATA:-../shared/data}"
godette="$data/vrm/godette/Godette_vrm_v4.vrm"
[[ -f "$godette" ]] || { echo "playground: no Godette at $godette (set TENDON_SHARED_DATA)" >&2; exit 1; }
wasm="${TENDON_WASM_DIR:-build/wasm}"
if [[ ! -f "$wasm/simd/tendon.wasm" || ! -f "$wasm/scalar/tendon.wasm" || ! -f "$wasm/tendon.mjs" ]]; then
  [[ -z "${TENDON_WASM_DIR:-}" ]] || { echo "playground: no WebAssembly build in $wasm" >&2; exit 1; }
  bash scripts/wasm.sh
fi
[[ -d ports/three/node_modules/three ]] || (cd ports/three && npm ci --silent --no-audit --no-fund)

rm -rf "$out"
mkdir -p "$out"/{vendor/three/build,vendor/three/examples/jsm/{loaders,controls,utils},vendor/three-vrm,tendon,assets}
cp ports/three/playground/index.html ports/three/playground/playground.mjs ports/three/playground/bench.mjs "$out/"
cp ports/three/tendon-three.mjs "$out/"
nm=ports/three/node_modules
cp "$nm/three/build/three.module.js" "$nm/three/build/three.core.js" "$out/vendor/three/build/"
cp "$nm/three/examples/jsm/loaders/GLTFLoader.js" "$out/vendor/three/examples/jsm/loaders/"
cp "$nm/three/examples/jsm/controls/OrbitControls.js" "$out/vendor/three/examples/jsm/controls/"
cp "$nm/three/examples/jsm/utils/BufferGeometryUtils.js" "$nm/three/examples/jsm/utils/SkeletonUtils.js" \
  "$out/vendor/three/examples/jsm/utils/"
cp "$nm/@pixiv/three-vrm/lib/three-vrm.module.js" "$out/vendor/three-vrm/"
cp "$nm/three/LICENSE" "$out/vendor/three/LICENSE"
cp "$nm/@pixiv/three-vrm/LICENSE" "$out/vendor/three-vrm/LICENSE" 2>/dev/null || true
# The WebAssembly module: the API beside the simd/ and scalar/ builds it picks between.
cp "$wasm"/tendon*.mjs "$out/tendon/"
for flavour in simd scalar; do
  mkdir -p "$out/tendon/$flavour"
  cp "$wasm/$flavour/tendon.mjs" "$wasm/$flavour/tendon.wasm" "$out/tendon/$flavour/"
done
cp "$godette" "$out/assets/godette.vrm"
cp "$data/vrm/godette/LICENSE_CC-BY-3.0_original_low-poly-godette.txt" "$out/assets/" 2>/dev/null || true
echo "playground: $out (serve it: python3 -m http.server -d $out 8000, then http://localhost:8000/)"
