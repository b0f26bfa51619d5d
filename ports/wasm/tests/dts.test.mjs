// ports/wasm/tests/dts.test.mjs: tendon.d.ts describes what tendon.mjs has. Every value the
// declarations export exists, and every method of the World and Tendon interfaces is a
// function of a real world / module (no TypeScript compiler needed: the declarations are
// read as text).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { api, loadTendon, repo } from './helpers.mjs';

const dts = fs.readFileSync(path.join(repo, 'ports', 'wasm', 'tendon.d.ts'), 'utf8');

function interfaceMethods(name) {
  const start = dts.indexOf(`export interface ${name} {`);
  assert.ok(start >= 0, `tendon.d.ts declares ${name}`);
  const body = dts.slice(start, dts.indexOf('\n}\n', start));
  return [...body.matchAll(/^\s+([a-zA-Z]+)\(/gm)].map((m) => m[1]);
}

test('every value tendon.d.ts exports is exported by tendon.mjs', () => {
  const declared = [...dts.matchAll(/^export (?:function|class|const) ([A-Za-z_]+)/gm)].map((m) => m[1]);
  assert.deepEqual(declared.sort(), ['DEBUG_DRAW', 'TRANSFORM_FLOATS', 'TendonError', 'loadTendon', 'simdSupported']);
  for (const name of declared) assert.ok(name in api, `tendon.mjs exports ${name}`);
});

test('every World and Tendon method tendon.d.ts declares is a function', async () => {
  const tendon = await loadTendon({ simd: false });
  const world = tendon.createWorld();
  const worldMethods = interfaceMethods('World');
  assert.ok(worldMethods.length > 50, `${worldMethods.length} World methods declared`);
  for (const m of worldMethods) assert.equal(typeof world[m], 'function', `World.${m}`);
  for (const m of interfaceMethods('Tendon')) assert.equal(typeof tendon[m], 'function', `Tendon.${m}`);
  for (const p of ['kernel', 'buffer', 'memoryGeneration', 'raw', 'layouts']) assert.ok(tendon[p] !== undefined, `Tendon.${p}`);
  world.destroy();
});
