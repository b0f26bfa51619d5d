#!/usr/bin/env bash
# Builds Tendon and runs the demo (the main job). Arguments go to tendon-demo (--help).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release
cmake --build build/release -j "$(nproc 2>/dev/null || echo 2)" --target tendon-demo
exec ./build/release/ports/demo/tendon-demo "$@"
