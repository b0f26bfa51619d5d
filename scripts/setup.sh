#!/usr/bin/env bash
# Installs what Tendon builds with, from Debian 12 packages, when it is missing.
# Safe to run again: it only calls apt-get when a package is absent.
set -euo pipefail
packages=(g++ gcc cmake make pkg-config python3 libxsimd-dev libtbb-dev libbenchmark-dev libgtest-dev libtinygltf-dev nlohmann-json3-dev libcli11-dev
  python3-cffi mono-devel)  # the Python package (cffi, with pycparser) and the C# host (mcs, mono)
if [[ "${TENDON_SETUP_CLANG:-0}" == 1 ]]; then packages+=(clang-14 libclang-rt-14-dev); fi
# --wasm: the WebAssembly build (scripts/wasm.sh): Emscripten, the acorn module its link step
# runs in Node, Node itself for the tests, and ccache (the two flavours share every object
# but the kernels' dispatch and SIMD files: the second compiles from the cache).
if [[ "${1:-}" == --wasm ]]; then packages+=(emscripten node-acorn nodejs ccache); fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
