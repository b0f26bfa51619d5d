#!/usr/bin/env bash
# Builds Tendon for WebAssembly with Debian 12's Emscripten (3.1.6): the kernel, the glTF/VRM
# importer and the C ABI as an ES module, twice:
#   build/wasm/simd/tendon.{mjs,wasm}    the SSE4.2 kernels through SIMD128 (-msimd128 -msse4.2)
#   build/wasm/scalar/tendon.{mjs,wasm}  the scalar kernels only (engines without SIMD128)
# and the JavaScript API beside them: build/wasm/tendon.mjs, tendon.d.ts (copies of
# ports/wasm/) and tendon_layouts.mjs (generated from tendon_c.h). Serve build/wasm/ as it is.
#   scripts/wasm.sh [--golden] [--bench]   --golden: also tendon_golden.js, the golden-hash scenes
#                                          (tests); --bench: also tendon_piles.js, the pile scene
#                                          (bench/wasm_vs_jolt_js.sh)
# Installs emscripten and node-acorn when missing (as root, like scripts/setup.sh). Uses
# ccache when present; -j2 at most (TENDON_WASM_JOBS).
set -euo pipefail
cd "$(dirname "$0")/.."
golden=OFF
bench=OFF
for arg in "$@"; do
  case "$arg" in
    --golden) golden=ON ;;
    --bench) bench=ON ;;
    *) echo "wasm.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done
bash scripts/setup.sh --wasm
# Debian installs acorn (which Emscripten's link-time optimizer needs) where Node 20 does not look.
export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}
launcher=()
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(cd .. && pwd)}"
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
jobs="${TENDON_WASM_JOBS:-2}"
for flavour in simd scalar; do
  simd=ON
  [[ $flavour == scalar ]] && simd=OFF
  emcmake cmake -S . -B "build/wasm-$flavour" -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" \
    -DTENDON_WASM_SIMD=$simd -DTENDON_WASM_GOLDEN=$golden -DTENDON_WASM_BENCH=$bench -DTENDON_BUILD_TESTS=OFF -DTENDON_BUILD_BENCH=OFF \
    -DTENDON_BUILD_DEMO=OFF -DTENDON_BUILD_TBB=OFF -DTENDON_WERROR=ON >/dev/null
  targets=(tendon_wasm)
  [[ $golden == ON ]] && targets+=(tendon_golden)
  [[ $bench == ON ]] && targets+=(tendon_piles)
  cmake --build "build/wasm-$flavour" -j"$jobs" --target "${targets[@]}"
  mkdir -p "build/wasm/$flavour"
  cp "build/wasm-$flavour/ports/wasm/tendon.mjs" "build/wasm-$flavour/ports/wasm/tendon.wasm" "build/wasm/$flavour/"
  if [[ $golden == ON ]]; then
    cp "build/wasm-$flavour/ports/wasm/tendon_golden.js" "build/wasm-$flavour/ports/wasm/tendon_golden.wasm" \
      "build/wasm/$flavour/"
  fi
  if [[ $bench == ON ]]; then
    cp "build/wasm-$flavour/ports/wasm/tendon_piles.js" "build/wasm-$flavour/ports/wasm/tendon_piles.wasm" "build/wasm/$flavour/"
  fi
done
cp build/wasm-simd/tendon_layouts.mjs build/wasm/
cp ports/wasm/tendon.mjs ports/wasm/tendon.d.ts build/wasm/
for flavour in simd scalar; do
  raw=$(stat -c %s "build/wasm/$flavour/tendon.wasm")
  gz=$(gzip -9 -c "build/wasm/$flavour/tendon.wasm" | wc -c)
  echo "wasm: build/wasm/$flavour/tendon.wasm: $raw bytes, $gz gzipped (gzip -9)"
done
