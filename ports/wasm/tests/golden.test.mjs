// ports/wasm/tests/golden.test.mjs: cross-platform determinism. The golden-hash scenes of
// tests/golden_hash_test.cpp, run in the WebAssembly builds (tendon_golden.js, built by
// `scripts/wasm.sh --golden`), must give the hashes that native x86-64 test records for the
// scalar reference: the scalar build's scalar kernel, and the SIMD build's SSE4.2 kernels
// (SIMD128), whose reference is the scalar kernel (no FMA on either side). The expected
// values are read from the native test's source, so a recorded change moves both.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { repo, sharedData, wasmDir } from './helpers.mjs';

// The x86-64 table (the #else branch of `#if defined(__aarch64__)`): kScalar's row.
function recordedScalarRow() {
  const source = fs.readFileSync(path.join(repo, 'tests', 'golden_hash_test.cpp'), 'utf8');
  const x86 = source.slice(source.indexOf('#else\nconstexpr Golden kGolden[]'));
  const row = x86.match(/\{Isa::kScalar, (0x[0-9a-f]+)ull, (0x[0-9a-f]+)ull, (0x[0-9a-f]+)ull\}/);
  assert.ok(row, 'tests/golden_hash_test.cpp has an x86-64 kScalar row');
  return { scene: row[1], heap: row[2], pile: row[3] };
}

function run(flavour) {
  const driver = path.join(wasmDir, flavour, 'tendon_golden.js');
  if (!fs.existsSync(driver)) return null;
  const out = execFileSync(process.execPath, ['--no-experimental-fetch', driver, sharedData], { encoding: 'utf8' });
  return out.trim().split('\n').map((line) => JSON.parse(line));
}

const strip = (h) => h.replace(/ull$/, '');
const expected = recordedScalarRow();

for (const [flavour, isas] of [['scalar', ['scalar']], ['simd', ['scalar', 'sse4.2']]]) {
  test(`the ${flavour} build reproduces the native scalar reference's golden hashes`, (t) => {
    const rows = run(flavour);
    if (rows === null) {
      t.skip(`build/wasm/${flavour}/tendon_golden.js is missing: run scripts/wasm.sh --golden`);
      return;
    }
    assert.deepEqual(rows.map((r) => r.isa), isas);
    for (const row of rows) {
      assert.equal(row.coloured, true, `${row.isa}: the crate heap colours its pairs`);
      assert.equal(strip(row.heap), expected.heap, `${row.isa} crate heap`);
      assert.equal(strip(row.scene), expected.scene, `${row.isa} determinism scene`);
      if (row.pile !== null) assert.equal(strip(row.pile), expected.pile, `${row.isa} Jolt-human piles`);
    }
  });
}
