// The playground's module: a yard of VRM avatars on Tendon (ports/three/tendon-three.mjs).
//
// What it does: loads Tendon's WebAssembly module (SIMD where the browser has it), Godette
// (and any .vrm dropped on the page) several times, walks them about on circles with
// swinging limbs, and each frame runs the port (animated pose in, one Tendon step, simulated
// pose out) before render. Drag a body part to grab it (Tendon's raycastRagdolls on the
// camera ray; a standing avatar is picked on its mesh and activated), release to throw it
// at the mouse's speed; a thrown or fallen avatar gets up again where it lies once it has
// settled. WASD/arrows steer a kinematic player capsule (a Tendon host body). Hard impacts
// (contact events) flash and count; a toggle draws Tendon's debug draw; the HUD shows the
// frame's phase times and the kernel; the replay slider scrubs the last seconds of poses.
// URL parameters: avatars=N (5), kernel=simd|scalar (what the browser supports), replay=S
// (seconds kept, 10), quality=low, bench=springs|frame (playground/bench.mjs; bench/springs_vs_three_vrm_browser.sh drives them).
// What it does NOT do: load textures' fancy materials beyond three-vrm's, animate from
// clips (the walk is procedural), or run without WebGL.
// Threading: the page's main thread. Memory: the replay keeps replay x 60 frames of every
// avatar's bone locals (about 2.7 kB per Godette per frame).
import * as THREE from "three";
import { GLTFLoader } from "three/addons/loaders/GLTFLoader.js";
import { OrbitControls } from "three/addons/controls/OrbitControls.js";
import { VRMLoaderPlugin, VRMUtils } from "@pixiv/three-vrm";
import { loadTendon } from "tendon";
import { TendonThree, transformOf } from "tendon-three";

const params = new URLSearchParams(location.search);
const kAvatarCount = Math.max(1, Math.min(200, parseInt(params.get("avatars") ?? "5", 10) || 5));
const kReplaySeconds = Math.max(1, Math.min(60, Number(params.get("replay") ?? "10") || 10));
const kBench = params.get("bench"); // null, "springs" or "frame"
const kFixedDt = 1 / 60;
const kHardImpact = 2.5; // m/s of approach: a contact this fast flashes and counts
const kGodette = "./assets/godette.vrm";
// quality=low: no shadows, no antialiasing, pixel ratio 1 (software WebGL in CI and benches).
const kLow = params.get("quality") === "low" || !!kBench;

const hook = {            // read by scripts/test_playground.sh's test (and handy in a console)
  ready: false, kernel: null, frames: 0, impacts: 0, errors: [], grabs: 0, throws: 0, getUps: 0,
};
window.__playground = hook;
const $ = (id) => document.getElementById(id);
function fail(error) {
  console.error(error);
  hook.errors.push(String(error?.message ?? error));
  $("error").style.display = "block";
  $("error").textContent = String(error?.stack ?? error);
}

// ---- three.js scene ----
const renderer = new THREE.WebGLRenderer({ antialias: !kLow, preserveDrawingBuffer: true });
renderer.setPixelRatio(kLow ? 1 : Math.min(2, devicePixelRatio));
renderer.setSize(innerWidth, innerHeight);
renderer.shadowMap.enabled = !kLow;
document.body.prepend(renderer.domElement);
const scene = new THREE.Scene();
scene.background = new THREE.Color(0xb9d3e8);
scene.fog = new THREE.Fog(0xb9d3e8, 18, 45);
const camera = new THREE.PerspectiveCamera(45, innerWidth / innerHeight, 0.05, 200);
camera.position.set(0, 3.2, 7.5);
const controls = new OrbitControls(camera, renderer.domElement);
controls.target.set(0, 0.9, 0);
controls.mouseButtons = { LEFT: null, MIDDLE: THREE.MOUSE.DOLLY, RIGHT: THREE.MOUSE.ROTATE };
controls.update();
scene.add(new THREE.HemisphereLight(0xffffff, 0x5a6b4a, 1.6));
const sun = new THREE.DirectionalLight(0xffffff, 2.2);
sun.position.set(4, 9, 5);
sun.castShadow = true;
sun.shadow.mapSize.set(2048, 2048);
Object.assign(sun.shadow.camera, { left: -12, right: 12, top: 12, bottom: -12 });
scene.add(sun);
const ground = new THREE.Mesh(new THREE.CircleGeometry(30, 64), new THREE.MeshStandardMaterial({ color: 0x8fae6b }));
ground.rotation.x = -Math.PI / 2;
ground.receiveShadow = true;
scene.add(ground);
const grid = new THREE.GridHelper(60, 60, 0x6d8a50, 0x7d9a5e);
grid.position.y = 0.002;
scene.add(grid);
addEventListener("resize", () => {
  camera.aspect = innerWidth / innerHeight;
  camera.updateProjectionMatrix();
  renderer.setSize(innerWidth, innerHeight);
});

// ---- Tendon ----
let tendon, world, port;
const walkers = []; // per avatar: the port's avatar, its VRM, its walk and state

async function fetchBytes(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return response.arrayBuffer();
}

async function parseVrm(bytes) {
  const loader = new GLTFLoader();
  loader.register((parser) => new VRMLoaderPlugin(parser));
  const gltf = await loader.parseAsync(bytes.slice(0), "");
  const vrm = gltf.userData.vrm;
  if (!vrm) throw new Error("not a VRM (no VRM extension in the file)");
  VRMUtils.rotateVRM0(vrm); // VRM 0.x faces -Z: turn it to face +Z like VRM 1.0
  vrm.scene.traverse((o) => { if (o.isMesh) { o.castShadow = true; o.frustumCulled = false; } });
  return { gltf, vrm };
}

// A walker: a circle around `centre`, a speed, and a phase for the limbs.
function makeWalk(i) {
  const ring = 1 + Math.floor(i / 6);
  return {
    centre: new THREE.Vector3(0, 0, 0),
    radius: 1.6 * ring + 0.4 * (i % 2),
    angle: (i * 2 * Math.PI) / Math.min(6, kAvatarCount) + ring * 0.5,
    speed: (0.75 + 0.12 * (i % 4)) * (i % 2 ? 1 : -1), // m/s along the circle; sign: direction
    phase: i * 1.3,
  };
}

async function addAvatar(bytes, name, index, key) {
  const { gltf, vrm } = await parseVrm(bytes);
  scene.add(vrm.scene);
  const walk = makeWalk(index);
  placeWalker(vrm.scene, walk, 0);
  // Standing avatars keep kinematic copies of their parts (VrmOptions.inactiveBodies), so
  // thrown bodies and the player bump into them and land on them (not in the benchmarks).
  const avatar = port.addVrm(vrm, gltf, bytes, { name, key, character: kBench !== "springs",
    inactiveBodies: kBench ? "none" : "kinematic" });
  const restRotations = [...(vrm.springBoneManager?.joints ?? [])].map((j) => ({
    bone: j.bone, rest: j.bone.quaternion.clone(),
  }));
  const walker = { avatar, vrm, walk, mode: "walk", modeTime: 0, restRotations, flash: 0 };
  walkers.push(walker);
  $("avatar-count").textContent = String(walkers.length);
  return walker;
}

function placeWalker(root, walk, dt) {
  walk.angle += (walk.speed / walk.radius) * dt;
  const x = walk.centre.x + walk.radius * Math.cos(walk.angle);
  const z = walk.centre.z + walk.radius * Math.sin(walk.angle);
  // the tangent, in the direction of travel
  const dx = -Math.sin(walk.angle) * Math.sign(walk.speed), dz = Math.cos(walk.angle) * Math.sign(walk.speed);
  root.position.set(x, 0, z);
  root.rotation.set(0, Math.atan2(dx, dz), 0);
}

// The procedural walk on the normalized humanoid: legs and arms swing, the hips bob.
function animateLimbs(vrm, phase, amount) {
  const h = vrm.humanoid;
  const bone = (n) => h.getNormalizedBoneNode(n);
  const s = Math.sin(phase), c = Math.cos(phase * 2);
  const set = (n, x, y, z) => { const b = bone(n); if (b) b.rotation.set(x, y, z); };
  set("leftUpperLeg", 0.55 * s * amount, 0, 0);
  set("rightUpperLeg", -0.55 * s * amount, 0, 0);
  set("leftLowerLeg", Math.max(0, -0.9 * Math.sin(phase - 0.9)) * amount, 0, 0);
  set("rightLowerLeg", Math.max(0, 0.9 * Math.sin(phase - 0.9)) * amount, 0, 0);
  set("leftUpperArm", -0.45 * s * amount, 0, 1.2);
  set("rightUpperArm", 0.45 * s * amount, 0, -1.2);
  set("leftLowerArm", 0, -0.3, 0);
  set("rightLowerArm", 0, 0.3, 0);
  set("spine", 0.05, 0.12 * s * amount, 0);
  set("head", 0, -0.1 * s * amount, 0.05 * c);
  const hips = bone("hips");
  if (hips) hips.position.y = (hips.userData.restY ??= hips.position.y) + 0.025 * Math.abs(c) * amount;
}

// ---- the player capsule (a host body) ----
const keys = new Set();
addEventListener("keydown", (e) => {
  keys.add(e.key.toLowerCase());
  if (e.key.toLowerCase() === "d" && e.shiftKey) $("debug").click();
});
addEventListener("keyup", (e) => keys.delete(e.key.toLowerCase()));
const player = {
  id: 0n,
  position: new THREE.Vector3(2.4, 0.9, -3.0),
  velocity: new THREE.Vector3(),
  mesh: new THREE.Mesh(new THREE.CapsuleGeometry(0.3, 1.2, 6, 16),
    new THREE.MeshStandardMaterial({ color: 0x3c6fd1, roughness: 0.4 })),
};
player.mesh.castShadow = true;
function steerPlayer(dt) {
  const forward = new THREE.Vector3();
  camera.getWorldDirection(forward);
  forward.y = 0;
  forward.normalize();
  const right = new THREE.Vector3().crossVectors(forward, new THREE.Vector3(0, 1, 0));
  const want = new THREE.Vector3();
  if (keys.has("w") || keys.has("arrowup")) want.add(forward);
  if (keys.has("s") || keys.has("arrowdown")) want.sub(forward);
  if (keys.has("d") || keys.has("arrowright")) want.add(right);
  if (keys.has("a") || keys.has("arrowleft")) want.sub(right);
  if (want.lengthSq() > 0) want.normalize().multiplyScalar(3.5);
  player.velocity.lerp(want, Math.min(1, dt * 10));
  player.position.addScaledVector(player.velocity, dt);
  player.mesh.position.copy(player.position);
  world.setHostBodyMotion(player.id, transformOf(player.position), [player.velocity.x, 0, player.velocity.z], [0, 0, 0]);
}

// ---- grab, drag and throw ----
const raycaster = new THREE.Raycaster();
const pointer = new THREE.Vector2();
let grab = null; // {walker, handle, plane, target, track}
function rayAt(event) {
  pointer.set((event.clientX / innerWidth) * 2 - 1, -(event.clientY / innerHeight) * 2 + 1);
  raycaster.setFromCamera(pointer, camera);
  return raycaster.ray;
}
function walkerOfRagdoll(ragdoll) {
  return walkers.find((w) => w.avatar.hasCharacter && w.avatar.active && w.avatar.ragdoll === ragdoll);
}
renderer.domElement.addEventListener("pointerdown", (event) => {
  if (event.button !== 0 || replay.viewing >= 0) return;
  const ray = rayAt(event);
  let walker = null, part = -1, point = null;
  // Bodies already down: Tendon's ray against the ragdolls.
  const hit = world.raycastRagdolls(ray.origin.toArray(), ray.direction.toArray(), 100);
  if (hit) {
    walker = walkerOfRagdoll(hit.ragdoll);
    if (walker) { part = hit.part; point = new THREE.Vector3(hit.point.x, hit.point.y, hit.point.z); }
  }
  if (!walker) {
    // Standing avatars: their ragdolls are off while animated, so pick the skinned mesh,
    // then the part nearest the point.
    const candidates = walkers.filter((w) => w.avatar.hasCharacter).map((w) => w.vrm.scene);
    const hits = raycaster.intersectObjects(candidates, true);
    if (hits.length) {
      walker = walkers.find((w) => { let o = hits[0].object; while (o && o !== w.vrm.scene) o = o.parent; return !!o; });
      point = hits[0].point.clone();
      part = walker?.avatar.nearestPart(point) ?? -1;
    }
  }
  if (!walker || part < 0) return;
  event.preventDefault();
  renderer.domElement.setPointerCapture(event.pointerId);
  setMode(walker, "ragdoll");
  const handle = walker.avatar.grab(part, point);
  const normal = new THREE.Vector3();
  camera.getWorldDirection(normal);
  grab = { walker, handle, plane: new THREE.Plane().setFromNormalAndCoplanarPoint(normal, point),
    target: point.clone(), track: [{ t: simClock, p: point.clone() }] };
  hook.grabs += 1;
  hook.lastGrabbed = walkers.indexOf(walker);
});
renderer.domElement.addEventListener("pointermove", (event) => {
  if (!grab) return;
  grab.moves = (grab.moves ?? 0) + 1;
  const target = new THREE.Vector3();
  if (!rayAt(event).intersectPlane(grab.plane, target)) return;
  target.y = Math.max(0.1, target.y);
  grab.target.copy(target);
  grab.handle.moveTo(target);
});
// The hand's track, one point per simulated frame (on the simulation's clock, so a slow
// page, whose frames are clamped to 0.1 s, throws at the speed the body saw the hand move).
function trackGrab() {
  if (!grab) return;
  grab.track.push({ t: simClock, p: grab.target.clone() });
  if (grab.track.length > 8) grab.track.shift();
}
function endGrab() {
  if (!grab) return;
  // The hand's speed over its last 0.1 s, and at least its last three frames (a slow page
  // sees a flick over few frames), is the throw; a hand held still before letting go just
  // drops the body.
  const s = grab.track;
  const end = { t: simClock + lastDt, p: grab.target.clone() }; // where the hand let go
  const recent = s.find((x) => end.t - x.t <= 0.1 + 1e-6) ?? s[s.length - 1];
  const first = s.length >= 3 && s[s.length - 3].t < recent.t ? s[s.length - 3] : recent;
  const seconds = Math.max(1e-3, end.t - first.t);
  const velocity = end.p.clone().sub(first.p).divideScalar(seconds).clampLength(0, 20);
  hook.lastThrow = { velocity: velocity.toArray().map((v) => +v.toFixed(2)), frames: s.length, moves: grab.moves ?? 0,
    from: first.p.toArray().map((v) => +v.toFixed(2)), to: end.p.toArray().map((v) => +v.toFixed(2)) };
  grab.handle.throw(velocity);
  if (velocity.length() > 0.05) hook.throws += 1;
  grab.walker.modeTime = 0;
  grab = null;
}
renderer.domElement.addEventListener("pointerup", endGrab);
renderer.domElement.addEventListener("pointercancel", endGrab);

function setMode(walker, mode) {
  if (walker.mode === mode) return;
  walker.mode = mode;
  walker.modeTime = 0;
}

// Gets up where it lies once settled (or quiet for a second), facing the way it lies.
function updateWalker(walker, dt) {
  const avatar = walker.avatar;
  walker.modeTime += dt;
  if (walker.mode === "ragdoll") {
    if (grab?.walker === walker) return;
    const state = avatar.state();
    if (!state?.active) { setMode(walker, "walk"); return; }
    walker.quiet = state.speed < 0.35 ? (walker.quiet ?? 0) + dt : 0;
    if (walker.modeTime > 1.5 && (state.settled || walker.quiet > 0.8)) {
      // The model frame to where the body gets up (World.characterRecoveryRoot: upright,
      // facing the way it lies), in the same frame as the hand-back.
      const stands = avatar.handBack(0.8);
      const { x, z } = stands.position;
      // re-centre the walk circle so the walk continues from where the body got up
      const w = walker.walk;
      w.centre.set(x - w.radius * Math.cos(w.angle), 0, z - w.radius * Math.sin(w.angle));
      walker.vrm.scene.position.copy(stands.position);
      walker.vrm.scene.quaternion.copy(stands.quaternion);
      setMode(walker, "getup");
      hook.getUps += 1;
    }
    return;
  }
  if (walker.mode === "getup") {
    animateLimbs(walker.vrm, walker.walk.phase, 0);
    if (walker.modeTime > 1.0) setMode(walker, "walk");
    return;
  }
  if (avatar.hasCharacter && avatar.active) { setMode(walker, "ragdoll"); return; }
  const walking = $("walk").checked;
  if (walking) {
    placeWalker(walker.vrm.scene, walker.walk, dt);
    walker.walk.phase += dt * Math.abs(walker.walk.speed) * 4.2;
  }
  animateLimbs(walker.vrm, walker.walk.phase, walking ? 1 : 0);
}

// ---- contact events: hard impacts flash and count ----
const flashes = [];
const flashGeometry = new THREE.SphereGeometry(1, 16, 12);
function onContacts() {
  const events = world.drainContactEvents();
  for (const e of events) {
    if (e.kind !== "began" || e.normalSpeed < kHardImpact) continue;
    hook.impacts += 1;
    const mesh = new THREE.Mesh(flashGeometry, new THREE.MeshBasicMaterial({ color: 0xffd040, transparent: true, opacity: 0.8 }));
    mesh.position.set(e.point.x, e.point.y, e.point.z);
    mesh.userData.age = 0;
    mesh.userData.size = Math.min(0.5, 0.06 * e.normalSpeed);
    scene.add(mesh);
    flashes.push(mesh);
    // a standing avatar struck hard by a flying body goes down (its kinematic copy is side B,
    // reported as the character's own ragdoll)
    if (e.bKind === "ragdoll" && e.normalSpeed > 4) {
      const character = world.characterOfRagdoll(e.bRagdoll);
      const struck = character ? walkers.find((w) => w.avatar.character === character) : null;
      if (struck && struck.mode === "walk" && !struck.avatar.active) {
        setMode(struck, "ragdoll");
        const push = -e.normalSpeed * 15; // N s: the normal points from the standing body toward the flying one
        struck.avatar.activate({ impulse: [e.normal.x * push, e.normal.y * push, e.normal.z * push] });
      }
    }
  }
  if (events.some((e) => e.kind === "began" && e.normalSpeed >= kHardImpact)) {
    $("impacts").classList.add("flash");
    setTimeout(() => $("impacts").classList.remove("flash"), 150);
  }
  $("impacts").textContent = String(hook.impacts);
}
function ageFlashes(dt) {
  for (let i = flashes.length - 1; i >= 0; --i) {
    const f = flashes[i];
    f.userData.age += dt;
    const t = f.userData.age / 0.4;
    f.scale.setScalar(f.userData.size * (0.5 + t));
    f.material.opacity = 0.8 * (1 - t);
    if (t >= 1) { scene.remove(f); f.material.dispose(); flashes.splice(i, 1); }
  }
}

// ---- debug draw: Tendon's lines as one LineSegments ----
const debugGeometry = new THREE.BufferGeometry();
const debugLines = new THREE.LineSegments(debugGeometry,
  new THREE.LineBasicMaterial({ vertexColors: true, depthTest: false, transparent: true }));
debugLines.renderOrder = 10;
debugLines.frustumCulled = false;
scene.add(debugLines);
function drawDebug() {
  debugLines.visible = $("debug").checked;
  if (!debugLines.visible) return;
  // 7 floats per vertex: x y z r g b a (a copy Tendon made, so it stays valid)
  const { segmentCount, data } = world.drawDebug();
  const interleaved = new THREE.InterleavedBuffer(data, 7);
  debugGeometry.setAttribute("position", new THREE.InterleavedBufferAttribute(interleaved, 3, 0));
  debugGeometry.setAttribute("color", new THREE.InterleavedBufferAttribute(interleaved, 4, 3));
  debugGeometry.setDrawRange(0, segmentCount * 2);
  hook.debugSegments = segmentCount;
}

// ---- replay: the last seconds of every avatar's pose ----
const replay = {
  capacity: Math.round(kReplaySeconds / kFixedDt), frames: [], viewing: -1,
  record() {
    const frame = walkers.map((w) => ({
      locals: Float32Array.from(w.avatar.handle.outputLocal),
      position: w.vrm.scene.position.clone(), rotation: w.vrm.scene.quaternion.clone(),
    }));
    frame.player = player.position.clone();
    this.frames.push(frame);
    if (this.frames.length > this.capacity) this.frames.shift();
    const slider = $("replay");
    slider.max = String(this.frames.length - 1);
    if (this.viewing < 0) slider.value = slider.max;
  },
  show(index) {
    const frame = this.frames[index];
    if (!frame) return;
    frame.forEach((f, i) => {
      const w = walkers[i];
      if (!w) return;
      w.vrm.scene.position.copy(f.position);
      w.vrm.scene.quaternion.copy(f.rotation);
      w.avatar.applyLocals(f.locals);
    });
    player.mesh.position.copy(frame.player);
  },
};
$("replay").addEventListener("input", (e) => {
  const index = parseInt(e.target.value, 10);
  const live = index >= replay.frames.length - 1;
  replay.viewing = live ? -1 : index;
  $("replay-label").textContent = live ? "live" : `${((replay.frames.length - 1 - index) * kFixedDt).toFixed(2)} s ago (paused)`;
  if (!live) replay.show(index);
});

// ---- HUD ----
const hudSamples = [];
function showStats(stats, frameMs) {
  hudSamples.push({ frameMs, stats });
  if (hudSamples.length < 20) return;
  const mean = (f) => hudSamples.reduce((a, s) => a + f(s), 0) / hudSamples.length;
  const t = (k) => mean((s) => s.stats?.times?.[k] ?? 0);
  $("frame-ms").textContent = `${mean((s) => s.frameMs).toFixed(2)} ms`;
  $("step-ms").textContent = `${t("totalMs").toFixed(3)} ms`;
  $("chains-ms").textContent = `${(t("poseMs") + t("solveMs")).toFixed(3)} ms`;
  $("ragdolls-ms").textContent = `${t("ragdollMs").toFixed(3)} ms`;
  $("io-ms").textContent = `${(t("gatherMs") + t("writebackMs")).toFixed(3)} ms`;
  $("active").textContent = String(hudSamples[hudSamples.length - 1].stats?.activeCharacters ?? 0);
  hudSamples.length = 0;
}

// ---- test hook ----
// The largest angle (degrees) between a spring joint's local rotation now and at rest.
hook.hairMotionDegrees = (i = 0) => {
  const w = walkers[i];
  if (!w) return 0;
  let worst = 0;
  for (const { bone, rest } of w.restRotations) worst = Math.max(worst, THREE.MathUtils.radToDeg(bone.quaternion.angleTo(rest)));
  return worst;
};
hook.springJoints = (i = 0) => walkers[i]?.restRotations.length ?? 0;
// Where a humanoid bone of avatar i is on screen (CSS pixels), for a scripted drag.
hook.screenOf = (i, boneName) => {
  const node = walkers[i]?.vrm.humanoid.getRawBoneNode(boneName);
  if (!node) return null;
  const p = node.getWorldPosition(new THREE.Vector3()).project(camera);
  return { x: (p.x + 1) / 2 * innerWidth, y: (1 - p.y) / 2 * innerHeight };
};
hook.avatar = (i) => {
  const w = walkers[i];
  if (!w) return null;
  const s = w.avatar.state();
  const hips = w.vrm.humanoid.getRawBoneNode("hips").getWorldPosition(new THREE.Vector3());
  return { mode: w.mode, active: !!s?.active, settled: !!s?.settled, speed: s?.speed ?? 0, hips: hips.toArray() };
};

// ---- the frame ----
let last = performance.now();
let simClock = 0; // seconds simulated
let lastDt = kFixedDt;
function frame(now) {
  requestAnimationFrame(frame);
  const frameStart = performance.now();
  const dt = Math.min(0.1, (now - last) / 1000);
  last = now;
  try {
    if (replay.viewing < 0) {
      simClock += dt;
      lastDt = dt;
      trackGrab();
      for (const w of walkers) updateWalker(w, dt);
      steerPlayer(dt);
      const stats = port.update(dt);
      onContacts();
      drawDebug();
      replay.record();
      hook.frames += 1;
      ageFlashes(dt);
      showStats(stats, performance.now() - frameStart);
    }
    controls.update();
    renderer.render(scene, camera);
  } catch (error) {
    fail(error);
  }
}

// ---- dropping a .vrm on the page ----
addEventListener("dragover", (e) => e.preventDefault());
addEventListener("drop", async (e) => {
  e.preventDefault();
  for (const file of e.dataTransfer?.files ?? []) {
    if (!/\.(vrm|glb)$/i.test(file.name)) { fail(new Error(`${file.name}: not a .vrm or .glb`)); continue; }
    try {
      await addAvatar(await file.arrayBuffer(), file.name, walkers.length, `drop:${file.name}:${file.size}`);
    } catch (error) {
      fail(new Error(`${file.name}: ${error.message}`));
    }
  }
});

async function main() {
  const want = params.get("kernel");
  tendon = await loadTendon(want ? { simd: want === "simd" } : {});
  hook.kernel = tendon.kernel;
  $("kernel").textContent = tendon.kernel === "scalar" ? "scalar" : "SIMD (simd128)";
  // Phase times for the HUD; contact events for the impacts.
  world = tendon.createWorld({ timePhases: true, contactEventCapacity: 4096 });
  world.buildStaticWorld({ planes: [{ normal: [0, 1, 0], offset: 0 }] });
  port = new TendonThree(tendon, world);
  player.id = world.addHostBody({ shape: "capsule", radius: 0.3, halfHeight: 0.6, transform: transformOf(player.position) });
  if (!kBench) scene.add(player.mesh);
  const bytes = await fetchBytes(kGodette);
  for (let i = 0; i < kAvatarCount; ++i) await addAvatar(bytes, "Godette_vrm_v4.vrm", i, "godette");
  if (kBench) {
    const { runBench } = await import("./bench.mjs");
    hook.bench = await runBench({ kind: kBench, walkers, port, scene, camera, renderer, animateLimbs, placeWalker, hook });
  }
  hook.ready = true;
  document.body.dataset.ready = "true";
  requestAnimationFrame(frame);
}
main().catch(fail);
