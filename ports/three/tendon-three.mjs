// ports/three/tendon-three.mjs: Tendon driving three.js avatars (three-vrm VRMs, and plain
// glTF skinned models) in the browser, through Tendon's WebAssembly module (ports/wasm).
//
// What it does:
//   TendonThree.addVrm   binds a three-vrm VRM from its .vrm bytes: the spring bones become
//                        kVrm chains and the humanoid a character (one Tendon kind per
//                        distinct file, shared by every avatar of it), and maps Tendon's
//                        bones onto the three.js objects by glTF node index (GLTFLoader
//                        renames nodes, so names are only a cross-check).
//   TendonThree.addGltf  the same for a plain glTF whose scene holds SkinnedMeshes (no VRM
//                        extension): chains only where the file has VRM spring bones.
//   TendonThree.update   once per frame, inside the host's requestAnimationFrame and before
//                        render: each avatar's animated local pose and model transform into
//                        Tendon's buffers, one World step, the simulated locals into the
//                        three.js bones. It replaces three-vrm's springBoneManager.update(dt)
//                        (do not call that, nor vrm.update: the port runs the rest of it).
//   TendonAvatar         activate, hit, grab (a part drive toward a point), throw and hand
//                        back the avatar's character.
// What it does NOT do: load files, animate (the host poses the normalized humanoid bones or
// the raw nodes before update), render, or own the World's static ground (the host builds
// it through the World).
// Threading: the page's main thread (the WebAssembly module is single-threaded). Memory: the
// pose buffers are views over WebAssembly memory; views are fetched again every frame from
// the module, so a memory growth between frames (a bind) never leaves a stale view here.
import * as THREE from "three";

const kTransformFloats = 10; // TendonTransform: translation xyz, rotation xyzw, scale xyz

// Tendon's bones are the nodes of the glTF's default scene, depth first in child order
// (ports/gltf/gltf_import.cpp, ReadSkeleton): this walks the same order over the JSON the
// GLTFLoader parsed, so bone k is json node nodeOfBone[k].
export function tendonBoneOrder(json) {
  const nodes = json.nodes ?? [];
  let roots;
  if (json.scenes?.length) {
    roots = json.scenes[json.scene ?? 0]?.nodes ?? [];
  } else {
    const child = new Uint8Array(nodes.length);
    for (const n of nodes) for (const c of n.children ?? []) child[c] = 1;
    roots = nodes.map((_, i) => i).filter((i) => !child[i]);
  }
  const nodeOfBone = [];
  const parents = [];
  const stack = [];
  for (let r = roots.length - 1; r >= 0; --r) stack.push([roots[r], -1]);
  while (stack.length) {
    const [node, parent] = stack.pop();
    const bone = nodeOfBone.length;
    nodeOfBone.push(node);
    parents.push(parent);
    const children = nodes[node].children ?? [];
    for (let c = children.length - 1; c >= 0; --c) stack.push([children[c], bone]);
  }
  return { nodeOfBone, parents };
}

// Object3D per Tendon bone, through the loader's associations (Object3D -> {nodes: i}).
// Throws, naming the bone, when the file's skeleton and Tendon's disagree.
export function mapBonesByNodeIndex(gltf, skeleton) {
  const json = gltf.parser.json;
  const { nodeOfBone, parents } = tendonBoneOrder(json);
  if (nodeOfBone.length !== skeleton.boneCount) {
    throw new Error(`tendon-three: the file's scene has ${nodeOfBone.length} nodes, Tendon's skeleton ` +
      `${skeleton.boneCount} bones: not the same file`);
  }
  const objectOfNode = new Map();
  for (const [object, assoc] of gltf.parser.associations) {
    // A mesh node with several primitives is a Group; its primitives are associated too
    // (with {meshes, primitives}), and never with {nodes}.
    if (object?.isObject3D && assoc?.nodes !== undefined && !objectOfNode.has(assoc.nodes)) {
      objectOfNode.set(assoc.nodes, object);
    }
  }
  const objects = new Array(nodeOfBone.length);
  for (let b = 0; b < nodeOfBone.length; ++b) {
    const node = nodeOfBone[b];
    if (parents[b] !== skeleton.parents[b]) {
      throw new Error(`tendon-three: bone ${b} ("${skeleton.names[b]}"): its parent is ${skeleton.parents[b]} in ` +
        `Tendon's skeleton and ${parents[b]} in the file`);
    }
    const expected = json.nodes[node].name || `node${node}`;
    if (skeleton.names[b] !== expected) {
      throw new Error(`tendon-three: bone ${b} is "${skeleton.names[b]}" in Tendon's skeleton and node ${node} ` +
        `"${expected}" in the file`);
    }
    const object = objectOfNode.get(node);
    if (!object) throw new Error(`tendon-three: node ${node} ("${expected}") has no three.js object`);
    objects[b] = object;
  }
  return objects;
}

const scratchMatrix = new THREE.Matrix4();
const scratchPos = new THREE.Vector3();
const scratchQuat = new THREE.Quaternion();
const scratchScale = new THREE.Vector3();

function writeTransform(out, offset, position, quaternion, scale) {
  out[offset] = position.x; out[offset + 1] = position.y; out[offset + 2] = position.z;
  out[offset + 3] = quaternion.x; out[offset + 4] = quaternion.y; out[offset + 5] = quaternion.z;
  out[offset + 6] = quaternion.w;
  out[offset + 7] = scale.x; out[offset + 8] = scale.y; out[offset + 9] = scale.z;
}

// A {translation, rotation, scale} transform, as the JavaScript API takes one.
export function transformOf(position, quaternion = new THREE.Quaternion(), scale = new THREE.Vector3(1, 1, 1)) {
  return {
    translation: [position.x, position.y, position.z],
    rotation: [quaternion.x, quaternion.y, quaternion.z, quaternion.w],
    scale: [scale.x, scale.y, scale.z],
  };
}

const v3 = (v) => [v.x, v.y, v.z];

// One avatar: its three.js objects, its Tendon avatar and character, and the calls a game
// makes on the character. Created by TendonThree.addVrm / addGltf.
export class TendonAvatar {
  constructor(port, { kind, handle, bones, root, vrm }) {
    this.port = port;
    this.kind = kind;
    this.handle = handle;  // the JavaScript API's VrmAvatar (its buffers)
    this.id = handle.id;
    this.bones = bones;    // Object3D per Tendon bone
    this.root = root;      // the Object3D whose world matrix is the model frame
    this.vrm = vrm ?? null;
    this.drives = new Set();
    this.inputBones = null;  // null: every bone (see TendonThree.pruneSpringsOnly)
    this.outputBones = null;
    this.rotationsOnly = false;  // true: readOutputs sets the springs' rotations only (pruneSpringsOnly)
    this.boneCount = handle.boneCount;
    this.character = handle.character || 0n;
  }

  // Tendon bone per character part (the kind's; see TendonThree.partBonesOf).
  get partBones() { return this.kind.partBones; }

  get world() { return this.port.world; }
  get hasCharacter() { return !!this.character; }
  get ragdoll() { return this.hasCharacter ? this.world.characterRagdoll(this.character) : 0n; }
  state() { return this.hasCharacter ? this.world.characterState(this.character) : null; }
  get active() { return !!this.state()?.active; }

  // Ragdolls the character from the pose it shows (options: the JavaScript API's activate
  // options: launchVelocity, impulse, strength, anchored, durationSeconds).
  activate(options = {}) { this.world.activateCharacter(this.character, options); }
  // A flinch (or a fall, if strong enough): an impulse (N s) at a world point of a part.
  hit(part, impulse, worldPoint, options = {}) {
    this.world.hitCharacter(this.character, part, impulse, worldPoint, options);
  }
  // Grabs a part at a world point: activates the character, and drives that point of the
  // part toward `target` (a Vector3; move it with grab.moveTo). Returns a handle with
  // moveTo(target), release() and throw(velocity).
  grab(part, worldPoint, options = {}) {
    if (!this.active) this.activate({ strength: options.strength ?? 0.15, anchored: 0 });
    const ragdoll = this.ragdoll;
    // The clicked point is driven, in the part's frame: activating put the parts where the
    // character shows them, and ragdollPartTransforms reads them back (10 floats a part).
    const frames = this.world.ragdollPartTransforms(ragdoll);
    const o = part * kTransformFloats;
    scratchQuat.set(frames[o + 3], frames[o + 4], frames[o + 5], frames[o + 6]).invert();
    const local = new THREE.Vector3(worldPoint.x - frames[o], worldPoint.y - frames[o + 1], worldPoint.z - frames[o + 2])
      .applyQuaternion(scratchQuat);
    const drive = this.world.addPartDrive(ragdoll, {
      part, localPoint: v3(local), target: v3(worldPoint),
      responseTime: options.responseTime ?? 0.08,
      maxForce: options.maxForce ?? 4000,
      dampingRatio: options.dampingRatio ?? 1,
    });
    this.drives.add(drive);
    const avatar = this;
    return {
      part, drive,
      moveTo(target) { if (avatar.drives.has(drive)) avatar.world.setPartDriveTarget(drive, v3(target)); },
      release() {
        if (avatar.drives.delete(drive)) avatar.dropDrive(drive);
      },
      // Lets go and throws the whole body along the velocity (m/s), mass-relative: the
      // strength is the speed times a reference mass, so a heavier body leaves slower.
      throw(velocity, referenceMass = 60, maxSpeed = 25) {
        this.release();
        const speed = velocity.length();
        if (speed > 0.05) avatar.throw(velocity.clone().divideScalar(speed), speed * referenceMass, 0, maxSpeed);
      },
    };
  }
  // A drive may have gone with its ragdoll (a character released by the budget): only a
  // live one is removed.
  dropDrive(drive) {
    if (this.world.partDriveIsValid(drive)) this.world.removePartDrive(drive);
  }
  throw(direction, strength, minSpeed = 0, maxSpeed = 25) {
    return this.world.throwRagdoll(this.ragdoll, direction, strength, minSpeed, maxSpeed);
  }
  // Hands the character back to the animation; the pose crossfades to the animation over
  // blendSeconds ('auto' holds a fallen body in the world, so a host that moves the model
  // frame to where the body lies in the same frame sees no jump). Returns where the model
  // should stand to get up the right way for how the body lies (World.
  // characterRecoveryRoot: upright, turned about +Y only): {position, quaternion, yaw
  // (radians about +Y), facing}, for the host to move its model frame there first.
  // legRoom (m): how far from the hips, toward the feet, the model's origin goes.
  handBack(blendSeconds = 0.6, legRoom = 0) {
    for (const d of this.drives) this.dropDrive(d);
    this.drives.clear();
    const state = this.world.characterState(this.character);
    const root = this.world.characterRecoveryRoot(this.character, legRoom);
    const quaternion = new THREE.Quaternion(root.rotation.x, root.rotation.y, root.rotation.z, root.rotation.w);
    const stands = { position: new THREE.Vector3(root.translation.x, root.translation.y, root.translation.z), quaternion,
      yaw: new THREE.Euler().setFromQuaternion(quaternion, "YXZ").y, facing: state.facing };
    this.world.deactivateCharacter(this.character, blendSeconds, "auto");
    return stands;
  }
  // The character part whose bone is `object` or its nearest mapped ancestor; -1: none.
  partOfObject(object) {
    for (let o = object; o; o = o.parent) {
      const bone = this.bones.indexOf(o);
      if (bone >= 0) {
        // walk up Tendon's skeleton to a bone that carries a part
        for (let b = bone; b >= 0; b = this.kind.skeleton.parents[b]) {
          const part = this.partBones.indexOf(b);
          if (part >= 0) return part;
        }
        return -1;
      }
    }
    return -1;
  }
  // The part whose bone lies nearest a world point (the skinned mesh was hit, not a bone).
  nearestPart(worldPoint) {
    let best = -1, bestDistance = Infinity;
    this.partBones.forEach((bone, part) => {
      this.bones[bone].getWorldPosition(scratchPos);
      const d = scratchPos.distanceToSquared(worldPoint);
      if (d < bestDistance) { bestDistance = d; best = part; }
    });
    return best;
  }
  // The springs' frame out (readOutputs, for an avatar pruneSpringsOnly pruned): a spring
  // writes its bones' rotations and nothing else (their translation and scale are the
  // animated ones the port has just read from these very objects), so only the quaternions
  // are set, as three-vrm's own update does: one Quaternion.set per bone, where
  // applyLocals makes three setter calls.
  applyRotations(locals) {
    const bones = this.bones, only = this.outputBones;
    for (let i = 0; i < only.length; ++i) {
      const b = only[i], o = b * kTransformFloats;
      bones[b].quaternion.set(locals[o + 3], locals[o + 4], locals[o + 5], locals[o + 6]);
    }
  }
  // Copies the simulated pose out of `outputLocal` (one frame's, or a replay's) into the
  // bones (only those the simulation moves: see TendonThree.pruneSpringsOnly).
  applyLocals(locals) {
    const bones = this.bones, only = this.outputBones;
    const count = only ? only.length : bones.length;
    for (let i = 0; i < count; ++i) {
      const b = only ? only[i] : i;
      const o = b * kTransformFloats, bone = bones[b];
      bone.position.set(locals[o], locals[o + 1], locals[o + 2]);
      bone.quaternion.set(locals[o + 3], locals[o + 4], locals[o + 5], locals[o + 6]);
      bone.scale.set(locals[o + 7], locals[o + 8], locals[o + 9]);
    }
  }
}

// The port: one per World. `tendon` is the loaded module (loadTendon), `world` a World of it.
export class TendonThree {
  constructor(tendon, world) {
    this.tendon = tendon;
    this.world = world;
    this.avatars = [];
    this.kinds = new Map(); // a key per file -> {handle, skeleton, partBones}
  }

  get kernel() { return this.tendon.kernel; }

  kindFor(bytes, name, options) {
    const key = options.key ?? name;
    let kind = this.kinds.get(key);
    if (!kind) {
      const handle = this.world.loadVrmKind(bytes, { name, character: options.character ?? true,
        totalMass: options.totalMass ?? 60, inactiveBodies: options.inactiveBodies ?? "none" });
      const s = handle.skeleton;
      kind = { handle, key, skeleton: { boneCount: handle.boneCount, names: s.names, parents: Array.from(s.parents),
        restLocal: s.restLocal }, partBones: null, archetype: handle.characterArchetype };
      this.kinds.set(key, kind);
    }
    return kind;
  }

  // Tendon bone per part of the kind's character (the archetype the kind built).
  partBonesOf(kind) {
    if (kind.partBones) return kind.partBones;
    const count = this.world.characterPartCount(kind.archetype);
    kind.partBones = [];
    for (let p = 0; p < count; ++p) kind.partBones.push(this.world.characterPartInfo(kind.archetype, p).bone);
    return kind.partBones;
  }

  // vrm: a three-vrm VRM (gltf.userData.vrm); gltf: the GLTFLoader result it came from;
  // bytes: the .vrm file's ArrayBuffer (Tendon imports it itself). options.key names the
  // file (avatars of one key share a kind; default: options.name), options.name names it in
  // errors, options.inactiveBodies ('none' or 'kinematic': VrmOptions) says whether the
  // standing character has kinematic copies of its parts that thrown bodies land on (per
  // kind: the first avatar of a key decides). The VRM's springBoneManager is left alone:
  // never call its update.
  addVrm(vrm, gltf, bytes, options = {}) {
    return this.add(gltf, vrm.scene, bytes, { ...options, vrm });
  }

  // A plain glTF (no VRM humanoid): the same binding on its scene.
  addGltf(gltf, bytes, options = {}) { return this.add(gltf, gltf.scene, bytes, options); }

  add(gltf, root, bytes, options) {
    const name = options.name ?? "avatar.vrm";
    const kind = this.kindFor(bytes, name, options);
    const bones = mapBonesByNodeIndex(gltf, kind.skeleton);
    root.updateMatrixWorld(true);
    scratchMatrix.copy(root.matrixWorld).decompose(scratchPos, scratchQuat, scratchScale);
    const handle = this.world.bindVrmAvatar(kind.handle, transformOf(scratchPos, scratchQuat, scratchScale));
    if (handle.character) this.partBonesOf(kind);
    const avatar = new TendonAvatar(this, { kind, handle, bones, root, vrm: options.vrm });
    if (!handle.character) this.pruneSpringsOnly(avatar, kind);
    this.avatars.push(avatar);
    return avatar;
  }

  // An avatar without a character changes only its spring joints' bones: the port then
  // writes only the bones the chains read (the joints, their colliders' bones, and every
  // ancestor of those, for the forward kinematics) and reads back only the joints and their
  // tails, instead of the whole skeleton (Godette: 29 and 16 of 71 bones). An avatar with a
  // character, or whose springs three-vrm did not load, moves every bone.
  pruneSpringsOnly(avatar, kind) {
    const springs = avatar.vrm?.springBoneManager;
    if (!springs || !springs.joints.size) return;
    const boneOf = (object) => avatar.bones.indexOf(object);
    const outputs = new Set(), inputs = new Set();
    for (const joint of springs.joints) {
      for (const object of [joint.bone, joint.child]) {
        const b = object ? boneOf(object) : -1;
        if (b >= 0) { outputs.add(b); inputs.add(b); }
      }
    }
    for (const collider of springs.colliders ?? []) {
      const b = collider.parent ? boneOf(collider.parent) : -1;
      if (b >= 0) inputs.add(b);
    }
    for (const b of [...inputs]) for (let p = kind.skeleton.parents[b]; p >= 0; p = kind.skeleton.parents[p]) inputs.add(p);
    avatar.inputBones = Int32Array.from([...inputs].sort((x, y) => x - y));
    avatar.outputBones = Int32Array.from([...outputs].sort((x, y) => x - y));
    avatar.rotationsOnly = true;
  }

  remove(avatar) {
    const i = this.avatars.indexOf(avatar);
    if (i < 0) return;
    this.avatars.splice(i, 1);
    for (const d of avatar.drives) avatar.dropDrive(d);
    avatar.drives.clear();
    avatar.handle.unbind();
  }

  // What vrm.update does besides the springs, before them: the humanoid (normalized bones
  // -> raw nodes), the look-at and the expressions.
  updateVrms(dt) {
    for (const a of this.avatars) {
      const vrm = a.vrm;
      if (!vrm) continue;
      vrm.humanoid?.update();
      vrm.lookAt?.update(dt);
      vrm.expressionManager?.update();
    }
  }

  // Before the step: each bone's local pose and the model frame into Tendon's buffers.
  writeInputs() {
    for (const a of this.avatars) {
      // Only the root's world matrix (and its parents'): the bones are read as locals.
      a.root.updateWorldMatrix(true, false);
      const buffers = a.handle; // views re-made by the API after a memory growth
      scratchMatrix.copy(a.root.matrixWorld).decompose(scratchPos, scratchQuat, scratchScale);
      writeTransform(buffers.modelWorld, 0, scratchPos, scratchQuat, scratchScale);
      const local = buffers.animatedLocal;
      const bones = a.bones;
      const only = a.inputBones;
      if (only) {
        for (let i = 0; i < only.length; ++i) {
          const b = only[i], bone = bones[b];
          writeTransform(local, b * kTransformFloats, bone.position, bone.quaternion, bone.scale);
        }
      } else {
        for (let b = 0; b < bones.length; ++b) {
          const bone = bones[b];
          writeTransform(local, b * kTransformFloats, bone.position, bone.quaternion, bone.scale);
        }
      }
      if (!a.hasCharacter) a.handle.updateWorld();
    }
  }

  // After the step: the simulated locals into the three.js bones.
  readOutputs() {
    for (const a of this.avatars) {
      if (a.rotationsOnly) a.applyRotations(a.handle.outputLocal);
      else a.applyLocals(a.handle.outputLocal);
      a.vrm?.nodeConstraintManager?.update();
    }
  }

  // One frame: inputs, step, outputs. Call inside requestAnimationFrame, after animating
  // and before render. Returns the World's frame stats.
  update(dt) {
    this.updateVrms(dt);
    this.writeInputs();
    const stats = this.world.step(dt);
    this.readOutputs();
    return stats;
  }
}
