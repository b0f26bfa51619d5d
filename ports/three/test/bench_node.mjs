// The springs bench of the playground (playground/bench.mjs, springs mode) in Node, timed by
// CPU time (process.cpuUsage) instead of the browser's clock: on a loaded machine the OS
// takes the core away for whole milliseconds, which a wall clock charges to whichever side
// was running, and CPU time does not. N Godettes parsed by GLTFLoader + three-vrm (headless
// shims as port.test.mjs), bound to Tendon without characters; alternating rounds of F
// frames: three-vrm's springBoneManager.update(dt) on every avatar, then the port's
// writeInputs + world.step + readOutputs, both after the same animation (scene moved,
// humanoid updated, matrices updated: outside both timings). Prints one JSON line per
// count: medians over the rounds, us per frame and ns per joint, and each part of the
// port's frame (timed in separate rounds, so their sum is close to, not equal to, the whole);
// what a pair of CPU-time reads costs (part of every per-frame figure) is printed beside.
//   cd ports/three && node test/bench_node.mjs [counts=1,10,100] [frames=300] [rounds=5] [simd|scalar]
// Needs build/wasm (TENDON_WASM_DIR) and ../shared/data (TENDON_SHARED_DATA).
// Threading: one thread. What it does NOT do: render, or run three-vrm's non-spring work
// (the port's updateVrms runs outside the timings).
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

globalThis.self ??= globalThis;
globalThis.createImageBitmap = async () => ({ width: 1, height: 1, close() {} });
console.warn = () => {};

const THREE = await import("three");
const { GLTFLoader } = await import("three/examples/jsm/loaders/GLTFLoader.js");
const { VRMLoaderPlugin, VRMUtils } = await import("@pixiv/three-vrm");
const { TendonThree } = await import("../tendon-three.mjs");
const wasmDir = resolve(process.env.TENDON_WASM_DIR ?? "../../build/wasm");
const { loadTendon } = await import(pathToFileURL(resolve(wasmDir, "tendon.mjs")).href);
const data = process.env.TENDON_SHARED_DATA ?? "../../../shared/data";
const file = readFileSync(resolve(data, "vrm/godette/Godette_vrm_v4.vrm"));
const bytes = () => file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength);

const [countsArg = "1,10,100", framesArg = "300", roundsArg = "5", kernel = "simd"] = process.argv.slice(2);
const frames = Number(framesArg), rounds = Number(roundsArg);
const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
const cpu = () => { const u = process.cpuUsage(); return u.user + u.system; };  // us
const tendon = await loadTendon({ simd: kernel === "simd" });

for (const count of countsArg.split(",").map(Number)) {
  const world = tendon.createWorld({ timePhases: true });
  const port = new TendonThree(tendon, world);
  const scene = new THREE.Scene();
  const avatars = [];
  for (let i = 0; i < count; ++i) {
    const loader = new GLTFLoader();
    loader.register((parser) => new VRMLoaderPlugin(parser));
    const gltf = await loader.parseAsync(bytes(), "");
    const vrm = gltf.userData.vrm;
    VRMUtils.rotateVRM0(vrm);
    vrm.scene.position.set(2 * (i % 10), 0, 2 * Math.floor(i / 10));
    scene.add(vrm.scene);
    port.addVrm(vrm, gltf, bytes(), { key: "godette", name: "godette.vrm", character: false });
    avatars.push(vrm);
  }
  const joints = avatars.reduce((n, v) => n + v.springBoneManager.joints.size, 0);
  let f = 0;
  const animate = () => {
    ++f;
    avatars.forEach((vrm, i) => {
      vrm.scene.position.x = 2 * (i % 10) + 0.4 * Math.sin(f / 9 + i);
      vrm.scene.rotation.y = 0.6 * Math.sin(f / 13 + i);
      vrm.humanoid.getNormalizedBoneNode("spine").rotation.y = 0.3 * Math.sin(f / 7 + i);
      vrm.humanoid.update();
    });
    scene.updateMatrixWorld();
  };
  const dt = 1 / 60;
  const timed = (work) => {
    let spent = 0;
    for (let k = 0; k < frames; ++k) {
      animate();
      port.updateVrms(dt);
      const t = cpu();
      work();
      spent += cpu() - t;
    }
    return spent / frames;
  };
  // What one cpu() pair costs (a getrusage each): in every per-frame figure below, printed
  // beside them rather than taken off (on a loaded machine it jumps, as a clock of its own).
  const clock = median(Array.from({ length: 5 }, () => timed(() => {})));
  const r = { threeVrm: [], tendon: [], write: [], step: [], read: [] };
  for (let round = 0; round <= rounds; ++round) {
    const three = timed(() => { for (const v of avatars) v.springBoneManager.update(dt); });
    const whole = timed(() => { port.writeInputs(); world.step(dt); port.readOutputs(); });
    // The parts, each in a round of its own (the other parts run untimed).
    let write = 0, step = 0, read = 0;
    for (let k = 0; k < frames; ++k) {
      animate();
      port.updateVrms(dt);
      let t = cpu(); port.writeInputs(); write += cpu() - t;
      t = cpu(); world.step(dt); step += cpu() - t;
      t = cpu(); port.readOutputs(); read += cpu() - t;
    }
    if (round === 0) continue;  // the JIT's warm-up
    r.threeVrm.push(three); r.tendon.push(whole);
    r.write.push(write / frames); r.step.push(step / frames); r.read.push(read / frames);
  }
  const three = median(r.threeVrm), whole = median(r.tendon);
  console.log(JSON.stringify({
    avatars: count, joints, kernel: tendon.kernel, frames, rounds, node: process.version,
    threeVrmUsPerFrame: +three.toFixed(1), tendonUsPerFrame: +whole.toFixed(1),
    threeVrmNsPerJoint: Math.round((three * 1e3) / joints), tendonNsPerJoint: Math.round((whole * 1e3) / joints),
    speedupPerJoint: +(three / whole).toFixed(2), clockPairUs: +clock.toFixed(2),
    writeInputsUs: +median(r.write).toFixed(1), stepUs: +median(r.step).toFixed(1), readOutputsUs: +median(r.read).toFixed(1),
  }));
  world.destroy();
}
