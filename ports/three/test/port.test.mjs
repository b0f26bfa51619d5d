// The three.js port in Node (node --test): three.js and three-vrm load Godette headless (no
// textures), Tendon's WebAssembly build (TENDON_WASM_DIR, default build/wasm) imports the
// same bytes, and the port maps every Tendon bone to the three.js node of the same glTF
// index, refuses another file's skeleton naming the bone, swings the hair when the model
// moves, and writes the simulated pose into the three.js bones.
//   TENDON_WASM_DIR=build/wasm node --test ports/three/test/port.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

// Headless shims (as ../shared/peers/three-vrm does): textures decode to a 1x1 stand-in.
globalThis.self ??= globalThis;
globalThis.createImageBitmap = async () => ({ width: 1, height: 1, close() {} });
console.warn = () => {}; // three-vrm warns about VRM 0.0 look-at curves it ignores

const THREE = await import("three");
const { GLTFLoader } = await import("three/examples/jsm/loaders/GLTFLoader.js");
const { VRMLoaderPlugin, VRMUtils } = await import("@pixiv/three-vrm");
const { TendonThree, tendonBoneOrder, mapBonesByNodeIndex } = await import("../tendon-three.mjs");
const wasmDir = resolve(process.env.TENDON_WASM_DIR ?? "build/wasm");
const { loadTendon } = await import(pathToFileURL(resolve(wasmDir, "tendon.mjs")).href);

const data = process.env.TENDON_SHARED_DATA ?? "../shared/data";
const file = readFileSync(resolve(data, "vrm/godette/Godette_vrm_v4.vrm"));
const bytes = () => file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength);

async function parse() {
  const loader = new GLTFLoader();
  loader.register((parser) => new VRMLoaderPlugin(parser));
  const gltf = await loader.parseAsync(bytes(), "");
  VRMUtils.rotateVRM0(gltf.userData.vrm);
  return gltf;
}

const tendon = await loadTendon({ simd: "auto" });

test("Port.EveryTendonBoneMapsToTheThreeNodeOfTheSameGltfIndex", async () => {
  const gltf = await parse();
  const world = tendon.createWorld();
  try {
    const kind = world.loadVrmKind(bytes(), { name: "godette.vrm" });
    const skeleton = { boneCount: kind.boneCount, names: kind.skeleton.names, parents: Array.from(kind.skeleton.parents) };
    const objects = mapBonesByNodeIndex(gltf, skeleton);
    const { nodeOfBone } = tendonBoneOrder(gltf.parser.json);
    assert.equal(objects.length, kind.boneCount);
    for (let b = 0; b < objects.length; ++b) {
      assert.equal(gltf.parser.associations.get(objects[b]).nodes, nodeOfBone[b], `bone ${b}`);
    }
    // The humanoid's hips (three-vrm's raw bone) is the object Tendon's "hips" bone maps to.
    const hips = gltf.userData.vrm.humanoid.getRawBoneNode("hips");
    assert.equal(kind.skeleton.names[objects.indexOf(hips)], gltf.parser.json.nodes[gltf.parser.associations.get(hips).nodes].name);
  } finally {
    world.destroy();
  }
});

test("Port.AnotherFilesSkeletonIsRefusedNamingTheBone", async () => {
  const gltf = await parse();
  const world = tendon.createWorld();
  try {
    const kind = world.loadVrmKind(bytes(), { name: "godette.vrm" });
    const names = [...kind.skeleton.names];
    names[3] = "NotThisBone";
    assert.throws(() => mapBonesByNodeIndex(gltf, { boneCount: kind.boneCount, names, parents: Array.from(kind.skeleton.parents) }),
      /bone 3 is "NotThisBone" in Tendon's skeleton/);
    assert.throws(() => mapBonesByNodeIndex(gltf, { boneCount: 5, names: names.slice(0, 5), parents: [-1, 0, 1, 2, 3] }),
      /has \d+ nodes, Tendon's skeleton 5 bones/);
  } finally {
    world.destroy();
  }
});

test("Port.HairSwingsWhenTheModelMovesAndTheBonesGetTheSimulatedPose", async () => {
  const gltf = await parse();
  const vrm = gltf.userData.vrm;
  const world = tendon.createWorld();
  try {
    const port = new TendonThree(tendon, world);
    const avatar = port.addVrm(vrm, gltf, bytes(), { key: "godette", name: "godette.vrm" });
    assert.ok(avatar.hasCharacter, "Godette has a humanoid: a character");
    assert.ok(avatar.partBones.length >= 10, `the character's parts map to bones (${avatar.partBones.length})`);
    const joints = [...vrm.springBoneManager.joints].map((j) => ({ bone: j.bone, rest: j.bone.quaternion.clone() }));
    assert.ok(joints.length > 0);
    let worst = 0;
    for (let f = 0; f < 60; ++f) {
      vrm.scene.position.x = 0.5 * Math.sin(2 * (f + 1) / 60);
      vrm.scene.rotation.y = Math.PI + 0.8 * Math.sin(1.3 * (f + 1) / 60);
      port.update(1 / 60);
      for (const j of joints) worst = Math.max(worst, j.bone.quaternion.angleTo(j.rest));
    }
    assert.ok(THREE.MathUtils.radToDeg(worst) > 2, `a spring joint turned ${THREE.MathUtils.radToDeg(worst).toFixed(2)} degrees`);
    // What the bones hold is Tendon's output, float for float.
    const out = avatar.handle.outputLocal;
    const b = avatar.bones.indexOf(joints[0].bone);
    assert.ok(b >= 0);
    assert.equal(Math.fround(joints[0].bone.quaternion.w), out[b * 10 + 6]);
  } finally {
    world.destroy();
  }
});


test("Port.ASpringsOnlyAvatarTakesOnlyRotationsBackSoItsSpringBonesKeepTheHostsTranslation", async () => {
  const gltf = await parse();
  const vrm = gltf.userData.vrm;
  const world = tendon.createWorld();
  try {
    const port = new TendonThree(tendon, world);
    const avatar = port.addVrm(vrm, gltf, bytes(), { key: "godette-springs", name: "godette.vrm", character: false });
    const bone = [...vrm.springBoneManager.joints][0].bone;
    // Not a float32: written back through Tendon's buffers it would come out rounded.
    const y = bone.position.y + 0.1234567891;
    bone.position.y = y;
    for (let f = 0; f < 10; ++f) {
      vrm.scene.position.x = 0.3 * Math.sin(f / 5);
      port.updateVrms(1 / 60);
      port.writeInputs();
      world.step(1 / 60);
      port.readOutputs();
    }
    assert.notEqual(Math.fround(y), y);
    assert.equal(bone.position.y, y, "the spring bone's translation is the host's, never Tendon's float32 copy");
    const o = avatar.bones.indexOf(bone) * 10;
    assert.equal(Math.fround(bone.quaternion.w), avatar.handle.outputLocal[o + 6], "its rotation is Tendon's");
  } finally {
    world.destroy();
  }
});

test("Port.ASpringsOnlyAvatarSwingsItsHairAndLeavesItsOtherBonesToTheAnimation", async () => {
  const gltf = await parse();
  const vrm = gltf.userData.vrm;
  const world = tendon.createWorld();
  try {
    const port = new TendonThree(tendon, world);
    const avatar = port.addVrm(vrm, gltf, bytes(), { key: "godette-springs", name: "godette.vrm", character: false });
    assert.ok(!avatar.hasCharacter);
    assert.ok(avatar.outputBones.length > 0 && avatar.outputBones.length < avatar.boneCount);
    assert.ok(avatar.inputBones.length >= avatar.outputBones.length);
    const joints = [...vrm.springBoneManager.joints].map((j) => ({ bone: j.bone, rest: j.bone.quaternion.clone() }));
    // A leg: no spring hangs from it, so Tendon is neither given nor asked its pose.
    const leg = vrm.humanoid.getRawBoneNode("leftUpperLeg");
    let worst = 0;
    for (let f = 0; f < 60; ++f) {
      vrm.scene.position.x = 0.5 * Math.sin(2 * (f + 1) / 60);
      vrm.scene.rotation.y = Math.PI + 0.8 * Math.sin(1.3 * (f + 1) / 60);
      // the animation swings the leg (normalized bone; updateVrms copies it to the raw one)
      vrm.humanoid.getNormalizedBoneNode("leftUpperLeg").rotation.x = 0.5 * Math.sin(3 * (f + 1) / 60);
      port.updateVrms(1 / 60);
      const animatedLeg = leg.quaternion.clone();
      port.writeInputs();
      world.step(1 / 60);
      port.readOutputs();
      assert.ok(leg.quaternion.equals(animatedLeg), "a bone no spring moves keeps the animation's rotation");
      assert.ok(!avatar.outputBones.includes(avatar.bones.indexOf(leg)));
      for (const j of joints) worst = Math.max(worst, j.bone.quaternion.angleTo(j.rest));
    }
    assert.ok(THREE.MathUtils.radToDeg(worst) > 2, `a spring joint turned ${THREE.MathUtils.radToDeg(worst).toFixed(2)} degrees`);
    const out = avatar.handle.outputLocal;
    for (const b of avatar.outputBones) {
      assert.equal(Math.fround(avatar.bones[b].quaternion.x), out[b * 10 + 3], `bone ${b} holds Tendon's output`);
    }
  } finally {
    world.destroy();
  }
});

test("Port.AGrabDrivesTheClickedPointAndHandBackStandsTheModelUpright", async () => {
  const gltf = await parse();
  const vrm = gltf.userData.vrm;
  const world = tendon.createWorld();
  try {
    world.buildStaticWorld({ planes: [{ normal: [0, 1, 0], offset: 0 }] });
    const port = new TendonThree(tendon, world);
    const avatar = port.addVrm(vrm, gltf, bytes(), { key: "godette-solid", name: "godette.vrm", inactiveBodies: "kinematic" });
    // The parts map to bones through the kind's own character archetype.
    assert.equal(avatar.kind.archetype, avatar.kind.handle.characterArchetype);
    assert.match(avatar.kind.skeleton.names[avatar.partBones[0]], /hips|pelvis/i);
    for (let f = 0; f < 5; ++f) port.update(1 / 60);
    // Grab the hips 15 cm to the side of the part's origin: that point is driven, so it
    // starts on its target (the part's origin would start 15 cm away).
    const hipsBone = avatar.bones[avatar.partBones[0]];
    const clicked = hipsBone.getWorldPosition(new THREE.Vector3()).add(new THREE.Vector3(0.15, 0, 0));
    const grab = avatar.grab(0, clicked);
    port.update(1 / 60);
    const distance = world.partDriveState(grab.drive).distance;
    assert.ok(distance < 0.05, `the clicked point stays near its target: ${distance.toFixed(3)} m`);
    grab.release();
    for (let f = 0; f < 120; ++f) port.update(1 / 60);
    const lies = world.characterState(avatar.character).root.translation;
    const stands = avatar.handBack(0.5);
    assert.ok(Math.abs(stands.quaternion.x) < 1e-4 && Math.abs(stands.quaternion.z) < 1e-4, "upright: turned about +Y only");
    assert.ok(Number.isFinite(stands.yaw));
    assert.ok(Math.hypot(stands.position.x - lies.x, stands.position.z - lies.z) < 1, "where the body lies");
    assert.ok(!world.characterState(avatar.character).active, "handed back");
  } finally {
    world.destroy();
  }
});
