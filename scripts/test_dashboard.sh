#!/usr/bin/env bash
# The dashboard (tools/dashboard) in a real browser: Debian's chromium driven by
# playwright-core from npm. The demo writes a trace; the test loads it and two committed
# benchmark files into the page, checks the legend, the numbers and the canvases, and saves
# a screenshot as CI's artefact: build/artifacts/dashboard.png (TENDON_ARTIFACTS moves it).
# Installs chromium, nodejs and npm with apt-get when they are missing and it runs as root.
#   bash scripts/test_dashboard.sh        (after scripts/test.sh, which builds the demo)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/need_browser.sh
NeedBrowser test_dashboard
(cd tools/dashboard && npm ci --silent --no-audit --no-fund)
demo=build/release/ports/demo/tendon-demo
[[ -x "$demo" ]] || cmake --build build/release -j "$(nproc 2>/dev/null || echo 2)" --target tendon-demo
artifacts="${TENDON_ARTIFACTS:-build/artifacts}"
mkdir -p "$artifacts"
"$demo" --seconds 3 --count 300 --trace "$artifacts/demo.trace.json" >/dev/null
node tools/dashboard/test/dashboard.test.mjs "$artifacts/demo.trace.json" \
  bench/results/amd-epyc-2core/avx2_fma.json bench/results/amd-epyc-2core/sse2.json "$artifacts/dashboard.png"
