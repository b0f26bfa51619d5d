// The playground's bench modes (index.html?bench=springs|frame&avatars=N), driven by
// bench/springs_vs_three_vrm_browser.sh in Chromium; the result lands in
// window.__playground.bench.
//
// springs: N avatars bound without characters (chains only). Alternating rounds of F frames:
//   three-vrm's springBoneManager.update(dt) on every avatar, then the port's springs work
//   (writeInputs: every avatar's pose in; one Tendon step; readOutputs: the poses out: the
//   whole cost a host pays instead), both after the same procedural animation (the port's
//   updateVrms, three-vrm's non-spring work, runs outside both timings). Reports ms per frame and ns per joint, the
//   median round of each, Tendon's own step time (FrameStats' total), and the port's frame
//   split into pose in, the step call and pose out.
// frame:   the whole playground frame (walk, port.update, render) at N avatars (characters
//   and springs), timed by the browser: the JavaScript time per frame, split into the port's
//   update (Tendon's step inside it, from FrameStats) and the render call, and the
//   requestAnimationFrame interval, medians over 120 frames.
// What it does NOT do: warm the JIT beyond a first discarded round, or pin the CPU clock.
// Threading: the page's main thread.
const kFrames = 300;
const kRounds = 5;
const kFrameBenchFrames = 120; // render-bound under software WebGL: fewer frames
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const quartile = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 4)];

export async function runBench({ kind, walkers, port, scene, camera, renderer, animateLimbs, placeWalker }) {
  const dt = 1 / 60;
  if (kind === "springs") {
    const joints = walkers.reduce((n, w) => n + (w.vrm.springBoneManager?.joints.size ?? 0), 0);
    const animate = () => {
      for (const w of walkers) {
        placeWalker(w.vrm.scene, w.walk, dt);
        w.walk.phase += dt * 4;
        animateLimbs(w.vrm, w.walk.phase, 1);
        w.vrm.humanoid.update();
      }
      scene.updateMatrixWorld();
    };
    const rounds = { threeVrm: [], tendon: [], tendonStep: [], write: [], stepCall: [], read: [] };
    // Every timed frame's own time too: on a loaded machine (the OS takes the core away
    // for whole milliseconds) the per-frame lower quartile is the less disturbed figure.
    const frames = { threeVrm: [], tendon: [] };
    for (let round = 0; round <= kRounds; ++round) {
      let spent = 0;
      for (let f = 0; f < kFrames; ++f) {
        animate();
        const t0 = performance.now();
        for (const w of walkers) w.vrm.springBoneManager.update(dt);
        const t1 = performance.now();
        spent += t1 - t0;
        if (round > 0) frames.threeVrm.push(t1 - t0);
      }
      if (round > 0) rounds.threeVrm.push(spent / kFrames);
      let step = 0, write = 0, stepCall = 0, read = 0;
      for (let f = 0; f < kFrames; ++f) {
        animate();
        port.updateVrms(dt); // three-vrm's non-spring work, outside both timings
        const t0 = performance.now();
        port.writeInputs();
        const t1 = performance.now();
        const stats = port.world.step(dt);
        const t2 = performance.now();
        port.readOutputs();
        const t3 = performance.now();
        write += t1 - t0;
        stepCall += t2 - t1;
        read += t3 - t2;
        step += stats.times.totalMs;
        if (round > 0) frames.tendon.push(t3 - t0);
      }
      if (round > 0) {
        rounds.tendon.push((write + stepCall + read) / kFrames);
        rounds.tendonStep.push(step / kFrames);
        rounds.write.push(write / kFrames);
        rounds.stepCall.push(stepCall / kFrames);
        rounds.read.push(read / kFrames);
      }
    }
    const three = median(rounds.threeVrm), tendon = median(rounds.tendon), step = median(rounds.tendonStep);
    return {
      kind, avatars: walkers.length, joints, frames: kFrames, rounds: kRounds, kernel: port.kernel,
      crossOriginIsolated: globalThis.crossOriginIsolated === true,
      threeVrmMsPerFrame: three, tendonMsPerFrame: tendon, tendonStepMsPerFrame: step,
      // The port's frame in three parts (medians of each): pose in (writeInputs, with each
      // avatar's updateWorld), world.step as JavaScript calls it, pose out (readOutputs).
      tendonWriteInputsMs: median(rounds.write), tendonStepCallMs: median(rounds.stepCall),
      tendonReadOutputsMs: median(rounds.read),
      threeVrmNsPerJoint: (three * 1e6) / joints, tendonNsPerJoint: (tendon * 1e6) / joints,
      speedupPerJoint: three / tendon,
      threeVrmFrameMsQ1: quartile(frames.threeVrm), tendonFrameMsQ1: quartile(frames.tendon),
      speedupPerJointQ1: quartile(frames.threeVrm) / quartile(frames.tendon),
    };
  }
  if (kind === "frame") {
    const js = [], intervals = [], portMs = [], stepMs = [], renderMs = [];
    let last = performance.now();
    await new Promise((done) => {
      let f = 0;
      const tick = (now) => {
        intervals.push(now - last);
        last = now;
        const t0 = performance.now();
        for (const w of walkers) {
          placeWalker(w.vrm.scene, w.walk, dt);
          w.walk.phase += dt * 4;
          animateLimbs(w.vrm, w.walk.phase, 1);
        }
        const t1 = performance.now();
        const stats = port.update(dt);
        const t2 = performance.now();
        renderer.render(scene, camera);
        const t3 = performance.now();
        js.push(t3 - t0);
        portMs.push(t2 - t1);
        stepMs.push(stats.times.totalMs);
        renderMs.push(t3 - t2);
        if (++f < kFrameBenchFrames) requestAnimationFrame(tick); else done();
      };
      requestAnimationFrame(tick);
    });
    intervals.shift();
    return { kind, avatars: walkers.length, frames: kFrameBenchFrames, kernel: port.kernel,
      frameJsMsMedian: median(js), portUpdateMsMedian: median(portMs), tendonStepMsMedian: median(stepMs),
      renderCallMsMedian: median(renderMs), rafIntervalMsMedian: median(intervals) };
  }
  throw new Error(`bench=${kind}: not a bench mode (springs, frame)`);
}
