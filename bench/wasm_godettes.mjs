// bench/wasm_godettes.mjs: N Godettes (VRM spring chains and a character each, standing on
// their animated rest pose and walking sideways) stepped by the WebAssembly build in Node,
// single-threaded, SIMD128 and scalar builds in alternating rounds. Prints ms per frame
// (mean over the timed frames; the world's own FrameStats phase times beside it).
// springs: the Godettes without characters (their spring chains only, as the three.js
// springs bench binds them), each avatar's updateWorld before the step (what the port calls
// for an avatar without a character), timed apart: updateWorldMs beside ms (the step call,
// FrameStats' read included).
//   node bench/wasm_godettes.mjs [count=10] [frames=300] [rounds=3] [springs]
// Needs build/wasm (scripts/wasm.sh) and ../shared/data (or TENDON_SHARED_DATA).
import fs from 'node:fs';
import path from 'node:path';
import url from 'node:url';

const here = path.dirname(url.fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..');
const data = process.env.TENDON_SHARED_DATA ?? path.resolve(repo, '..', 'shared', 'data');
const { loadTendon } = await import(url.pathToFileURL(path.join(repo, 'build', 'wasm', 'tendon.mjs')).href);
const [count = 10, frames = 300, rounds = 3] = process.argv.slice(2, 5).map(Number);
const springsOnly = process.argv[5] === 'springs';
const bytes = fs.readFileSync(path.join(data, 'vrm', 'godette', 'Godette_vrm_v4.vrm'));

async function round(simd) {
  const tendon = await loadTendon({ simd });
  const world = tendon.createWorld({ timePhases: true });
  const kind = world.loadVrmKind(bytes, { name: 'godette.vrm', character: !springsOnly });
  const avatars = Array.from({ length: count }, (_, i) => {
    const a = world.bindVrmAvatar(kind, { translation: [2 * (i % 8), 0, 2 * Math.floor(i / 8)] });
    a.animatedLocal.set(kind.skeleton.restLocal);
    return a;
  });
  let wall = 0;
  let stepMs = 0;
  let updateWorld = 0;
  for (let f = 0; f < frames; ++f) {
    for (let i = 0; i < count; ++i) avatars[i].modelWorld[0] = 2 * (i % 8) + 0.3 * Math.sin(f / 10 + i);
    const u0 = performance.now();
    if (springsOnly) for (const a of avatars) a.updateWorld();
    updateWorld += performance.now() - u0;
    const t0 = performance.now();
    const stats = world.step(1 / 60);
    wall += performance.now() - t0;
    stepMs += stats.times.totalMs;
  }
  world.destroy();
  return { kernel: tendon.kernel, springsOnly, ms: wall / frames, phasesMs: stepMs / frames,
    ...(springsOnly ? { updateWorldMs: updateWorld / frames } : {}) };
}

for (let r = 0; r < rounds; ++r) {
  for (const simd of r % 2 === 0 ? [true, false] : [false, true]) {
    const result = await round(simd);
    console.log(JSON.stringify({ round: r, godettes: count, frames, ...result }));
  }
}
