#!/usr/bin/env bash
# The WebAssembly build and its Node tests (CI): installs Emscripten and node-acorn when
# missing (scripts/setup.sh --wasm, as root), builds build/wasm/{simd,scalar} with the
# golden-hash driver (scripts/wasm.sh --golden), checks that neither module links libc++'s
# iostreams (issue 39: no iostreams in the kernel build), then runs ports/wasm/tests with
# Node's own runner: the JavaScript API on both builds, tendon.d.ts against the module, and
# the golden hashes of both builds. TENDON_SHARED_DATA defaults to ../shared/data (Godette,
# the Jolt human).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/wasm.sh --golden
# The link's symbol map (function index -> name: --emit-symbol-map in ports/wasm/CMakeLists.txt)
# names every function in the module; a stream class or ios_base there means something
# (device calibration's /proc/cpuinfo read, tinygltf's error messages once) pulled them in.
for flavour in simd scalar; do
  symbols="build/wasm-$flavour/ports/wasm/tendon.mjs.symbols"
  if ! grep -q 'tendon_world_step' "$symbols" 2>/dev/null; then
    echo "test_wasm: $symbols is missing or names no tendon_world_step" >&2
    exit 1
  fi
  if grep -E 'basic_(i|o|io)stream<|basic_(string|file|stream)buf<|ios_base|basic_(i|o)?fstream<|basic_(i|o)?stringstream<' "$symbols" | head -5 | grep .; then
    echo "test_wasm: build/wasm/$flavour/tendon.wasm links libc++'s iostreams (symbols above, from $symbols)" >&2
    exit 1
  fi
  echo "test_wasm: build/wasm/$flavour/tendon.wasm links no iostreams"
done
export TENDON_SHARED_DATA="${TENDON_SHARED_DATA:-$(cd .. && pwd)/shared/data}"
node --test ports/wasm/tests/
