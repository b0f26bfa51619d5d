// ports/wasm/tests/golden.test.mjs: determinism of the WebAssembly builds. The golden-hash
// scenes of tests/golden_hash_test.cpp (the determinism scene, the crate heap, the Jolt-human
// piles), run by tendon_golden.js (`scripts/wasm.sh --golden`), must give:
// - the same bits on every kernel of both builds: the scalar build's scalar kernel, the SIMD
//   build's scalar kernel and its SSE4.2 kernels compiled to SIMD128 (no FMA on either side);
// - the hashes recorded below for WebAssembly. They are not the native x86-64 ones
//   (tests/golden_hash_test.cpp): the scenes and the kernel call sin, cos and atan2, and
//   Emscripten's C library (musl) gives other last bits than glibc's for sinf, cosf, atan2f
//   and acosf (powf, expf and sqrtf agree), exactly as glibc on ARM64 does for sin and cos,
//   which is why that test keeps an ARM64 table. Flush-to-zero is not the cause: the native
//   scenes give their recorded hashes with the denormal guard removed too (docs/javascript.md).
// A change meant to move results records the new hashes here (the failure prints them), as
// it does in the native test.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { sharedData, wasmDir } from './helpers.mjs';

// Recorded at issue 39 (Emscripten 3.1.6, clang 14, -O2), with the native x86-64 table's
// kScalar row at 0x2613c29f2fd43139 / 0x345bdd0e60de6681 / 0xce5747c1a219b95c.
const kWasmGolden = { scene: '0xf6b456fda6dca483', heap: '0x7fb6aa8a72f72b12', pile: '0x16d976c37a38b355' };

function run(flavour) {
  const driver = path.join(wasmDir, flavour, 'tendon_golden.js');
  if (!fs.existsSync(driver)) return null;
  // --no-experimental-fetch: Emscripten 3.1.6's loader would fetch() the .wasm's file path.
  const out = execFileSync(process.execPath, ['--no-experimental-fetch', driver, sharedData], { encoding: 'utf8' });
  return out.trim().split('\n').map((line) => JSON.parse(line));
}

const strip = (h) => h.replace(/ull$/, '');

for (const [flavour, isas] of [['scalar', ['scalar']], ['simd', ['scalar', 'sse4.2']]]) {
  test(`every kernel of the ${flavour} build reproduces the recorded WebAssembly golden hashes`, (t) => {
    const rows = run(flavour);
    if (rows === null) {
      t.skip(`build/wasm/${flavour}/tendon_golden.js is missing: run scripts/wasm.sh --golden`);
      return;
    }
    assert.deepEqual(rows.map((r) => r.isa), isas);
    for (const row of rows) {
      const now = `now scene ${strip(row.scene)}, heap ${strip(row.heap)}, pile ${row.pile && strip(row.pile)}`;
      assert.equal(row.coloured, true, `${row.isa}: the crate heap colours its pairs`);
      assert.equal(strip(row.heap), kWasmGolden.heap, `${row.isa} crate heap: ${now}`);
      assert.equal(strip(row.scene), kWasmGolden.scene, `${row.isa} determinism scene: ${now}`);
      if (row.pile === null) t.diagnostic(`${row.isa}: no ${sharedData}/jolt-human: the piles are not checked`);
      else assert.equal(strip(row.pile), kWasmGolden.pile, `${row.isa} Jolt-human piles: ${now}`);
    }
  });
}
