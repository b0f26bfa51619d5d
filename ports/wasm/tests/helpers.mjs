// ports/wasm/tests/helpers.mjs: where the Node tests find the built module and the shared data.
import path from 'node:path';
import url from 'node:url';

const here = path.dirname(url.fileURLToPath(import.meta.url));
export const repo = path.resolve(here, '..', '..', '..');
// scripts/wasm.sh's output; TENDON_WASM_DIR overrides it.
export const wasmDir = process.env.TENDON_WASM_DIR ?? path.join(repo, 'build', 'wasm');
export const sharedData = process.env.TENDON_SHARED_DATA ?? path.resolve(repo, '..', 'shared', 'data');
// The API as built (build/wasm/tendon.mjs is ports/wasm/tendon.mjs beside its layouts).
export const api = await import(url.pathToFileURL(path.join(wasmDir, 'tendon.mjs')).href);
export const { loadTendon, TendonError, simdSupported, DEBUG_DRAW } = api;
export const flavours = [{ name: 'simd', simd: true, kernel: 'simd128' }, { name: 'scalar', simd: false, kernel: 'scalar' }];

// A limp chain (no stiffness) of `n` bones 0.2 m apart along +x: it sags under gravity from
// its straight rest pose.
export function horizontalChain(n = 5) {
  return {
    name: 'rope',
    settings: { stiffness: 0 },
    bones: Array.from({ length: n }, (_, i) => ({ parent: i - 1, restLocal: { translation: [i === 0 ? 0 : 0.2, 0, 0] } })),
  };
}

// Calls fn and returns the TendonError it throws (fails when it throws nothing or another error).
export function refusal(assert, fn) {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof TendonError, `expected a TendonError, got ${e}`);
    return e;
  }
  assert.fail('the call was not refused');
}
