#!/usr/bin/env bash
# The WebAssembly build and its Node tests (CI): installs Emscripten and node-acorn when
# missing (scripts/setup.sh --wasm, as root), builds build/wasm/{simd,scalar} with the
# golden-hash driver (scripts/wasm.sh --golden), then runs ports/wasm/tests with Node's own
# runner: the JavaScript API on both builds, tendon.d.ts against the module, and the golden
# hashes of both builds. TENDON_SHARED_DATA defaults to ../shared/data (Godette, the Jolt human).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/wasm.sh --golden
export TENDON_SHARED_DATA="${TENDON_SHARED_DATA:-$(cd .. && pwd)/shared/data}"
node --test ports/wasm/tests/
