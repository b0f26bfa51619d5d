// ports/wasm/tendon.d.ts: TypeScript declarations of Tendon's JavaScript API (tendon.mjs).
//
// What it does: describes the ES module `tendon.mjs`, a thin layer over Tendon's C ABI
// (include/tendon/tendon_c.h) compiled to WebAssembly: load the module (SIMD128 or scalar,
// picked at load time), create Worlds, build archetypes, bind chains, ragdolls, characters
// and VRM avatars (from a .vrm ArrayBuffer), step, read poses, and the living-world calls
// (host bodies, part drives, contact events, debug draw), network snapshots and following.
// What it does NOT do: threads (the module is single-threaded; see docs/javascript.md), or
// the host callbacks (wind sampler, simulate predicate) of the C ABI.
//
// Files (stable paths; scripts/wasm.sh writes them):
//   build/wasm/tendon.mjs            this API (a copy of ports/wasm/tendon.mjs)
//   build/wasm/tendon.d.ts           these declarations (a copy of ports/wasm/tendon.d.ts)
//   build/wasm/tendon_layouts.mjs    the C structs' wasm32 layouts (generated from tendon_c.h)
//   build/wasm/simd/tendon.mjs       Emscripten's loader and  build/wasm/simd/tendon.wasm    (SIMD128 kernels)
//   build/wasm/scalar/tendon.mjs     Emscripten's loader and  build/wasm/scalar/tendon.wasm  (scalar kernels)
// `loadTendon()` finds simd/ and scalar/ beside its own URL (import.meta.url) unless
// `baseUrl` says otherwise, so serving build/wasm/ as a static folder is enough.
//
// Units: metres, seconds, kilograms, radians unless a name says degrees. Ids are BigInt
// (Tendon's 64-bit handles: index | generation << 32; 0n is null).
//
// Memory: Tendon's buffers (poses, bindings) live in the WebAssembly memory. Pose buffers are
// typed-array VIEWS over that memory, never copies: reading one per frame costs nothing.
// When the memory grows (any call that allocates: building, binding, loading a VRM), every
// view made before is detached (its length becomes 0). The instance objects below (VrmAvatar,
// ChainInstance, RagdollInstance, CharacterInstance) re-create their views on access when
// the memory has grown, so read `avatar.outputLocal` each frame rather than keeping the
// array it returned across calls that allocate; a host that keeps views itself can compare
// `view.buffer !== tendon.buffer` (or watch `tendon.memoryGeneration`) and re-read.
// Objects a World returns are freed by their own `destroy` / `unbind` / `unload`, or all at
// once by `world.destroy()`.
//
// Threading: one thread (the one that loaded the module). Errors: every refused call throws
// a TendonError carrying Tendon's message, the offending field and item, and the C result.

/** The kernel the loaded module runs. */
export type KernelName = 'simd128' | 'scalar';

export interface LoadOptions {
  /** true: the SIMD128 build (throws where WebAssembly SIMD is missing); false: scalar;
   *  'auto' or absent: SIMD128 where `WebAssembly.validate` accepts a SIMD module. */
  simd?: boolean | 'auto';
  /** Folder holding simd/ and scalar/ (default: the folder of tendon.mjs). */
  baseUrl?: string | URL;
  /** The .wasm bytes, instead of fetching/reading them (Node: fs.readFileSync). */
  wasmBinary?: ArrayBuffer | Uint8Array;
}

/** Loads the module. Node reads the .wasm with fs; browsers fetch it. */
export function loadTendon(options?: LoadOptions): Promise<Tendon>;
/** Whether this engine compiles WebAssembly SIMD128 (validates a tiny SIMD module). */
export function simdSupported(): boolean;

/** A call Tendon refused. `message` is Tendon's own (which item, which field, why). */
export class TendonError extends Error {
  /** The C call that failed, e.g. "tendon_bind_chain". */
  readonly call: string;
  /** TendonResult value (e.g. 8). */
  readonly code: number;
  /** TendonResult name (e.g. "TENDON_ERROR_OUT_OF_RANGE"). */
  readonly codeName: string;
  /** The field as a host would write it ("bones[3].parent"), or "". */
  readonly field: string;
  /** The offending index, or -1. */
  readonly item: number;
}

// ---- values ----
/** {x, y, z} (a THREE.Vector3 works) or [x, y, z]. Outputs are {x, y, z}. */
export type Vec3Like = { x: number; y: number; z: number } | readonly [number, number, number];
/** Unit quaternion {x, y, z, w} (a THREE.Quaternion works) or [x, y, z, w]. */
export type QuatLike = { x: number; y: number; z: number; w: number } | readonly [number, number, number, number];
export interface Vec3 { x: number; y: number; z: number; }
export interface Quat { x: number; y: number; z: number; w: number; }
export interface TransformLike { translation?: Vec3Like; rotation?: QuatLike; scale?: Vec3Like; }
export interface Transform { translation: Vec3; rotation: Quat; scale: Vec3; }
/** Floats per transform in every pose buffer: translation xyz, rotation xyzw, scale xyz. */
export const TRANSFORM_FLOATS: 10;
export type Id = bigint;

export interface Tendon {
  /** Which kernel this module runs. */
  readonly kernel: KernelName;
  /** The WebAssembly memory's current ArrayBuffer, which every view is over (a new one
   *  each time the memory grows). */
  readonly buffer: ArrayBuffer;
  /** Increments each time the memory grew (and older views were detached). */
  readonly memoryGeneration: number;
  /** Bytes of WebAssembly memory now (grows, never shrinks). */
  heapBytes(): number;
  /** Bytes malloc holds now (for leak checks). */
  allocatedBytes(): number;
  createWorld(settings?: Partial<WorldSettings>): World;
  /** The Emscripten module object (raw C calls: `raw._tendon_world_step(...)`). */
  readonly raw: any;
  /** Struct layouts (offsets, sizes) of tendon_c.h on wasm32, for hosts that call `raw`. */
  readonly layouts: Record<string, { size: number; align: number; fields: Record<string, unknown> }>;

  // ---- network snapshots (tendon/net_snapshot.h; docs/snapshots.md): pure codecs, no world ----
  /** The most bytes an encoded pose of partCount parts takes (0 for bad settings or count). */
  maxNetPoseBytes(partCount: number, settings?: Partial<NetPoseSettings> | null): number;
  /** The message for `pose`, as a delta against `baseline` (the pose the receiver decoded at
   *  the tick it acknowledged: keep what decodeNetPose gave for your own sends) or in full
   *  (null). A fresh Uint8Array. */
  encodeNetPose(pose: NetPoseLike, baseline?: NetPoseLike | null, settings?: Partial<NetPoseSettings> | null): Uint8Array;
  /** The pose a message carries; a delta needs its baseline (netPoseBaselineTick says which).
   *  A message that is cut, corrupted (CRC-8) or against another baseline throws TendonError. */
  decodeNetPose(bytes: Uint8Array | ArrayBuffer, baseline?: NetPoseLike | null, settings?: Partial<NetPoseSettings> | null): NetPose;
  netPosePartCount(bytes: Uint8Array | ArrayBuffer): number;
  /** -1 for a full pose, else the low 16 bits of the tick of the baseline the message needs. */
  netPoseBaselineTick(bytes: Uint8Array | ArrayBuffer): number;
  /** A character's state change as its own message (at most 18 bytes). */
  encodeNetCharacterState(state: NetCharacterStateLike): Uint8Array;
  decodeNetCharacterState(bytes: Uint8Array | ArrayBuffer): NetCharacterState;
}

// ---- world ----
export type IsaName = 'auto' | 'scalar' | 'scalar_fma' | 'sse2' | 'sse42' | 'avx2_fma' | 'neon' | 'avx512';

/** tendon::WorldSettings (units and ranges in docs/ and tendon/world_settings.h); camelCase
 *  of the C fields. `tasks` and `deviceProfile` are not settable from JavaScript. */
export interface WorldSettings {
  gravity: Vec3Like;
  fixedHz: number;
  maxSubsteps: number;
  renderInterpolation: boolean;
  timePhases: boolean;
  maxDistance: number;
  maxChains: number;
  pendulumMaxDistance: number;
  teleportDistance: number;
  teleportAngleDegrees: number;
  ambientWind: Vec3Like;
  windSeed: bigint;
  ragdollSubsteps: number;
  ragdollIterations: number;
  ragdollSleepSpeed: number;
  ragdollContactAngularDamping: number;
  ragdollMaxPushSpeed: number;
  ragdollSleepSeconds: number;
  ragdollSettleDamping: number;
  maxActiveCharacters: number;
  frameBudgetMs: number;
  budgetMinRagdollSubsteps: number;
  /** 'auto' (default): the module's kernel. 'scalar' forces the scalar kernel in the SIMD build. */
  isa: IsaName;
  /** Contact events one step queues, [0, 1048576]; 0: off (default). */
  contactEventCapacity: number;
}

export interface PhaseTimes {
  gatherMs: number; budgetMs: number; poseMs: number; solveMs: number; writebackMs: number;
  pendulumMs: number; ragdollMs: number; totalMs: number;
}
/** tendon::FrameStats, camelCase of TendonFrameStats' fields (bools as numbers 0/1). */
export interface FrameStats {
  frame: bigint; substeps: number; droppedSeconds: number; dtRejected: number; interpolationAlpha: number;
  boundChains: number; boundPendulums: number; simulatedChains: number; simulatedPendulums: number;
  simulatedInstanceSubsteps: bigint;
  sleepingChains: number; culledByDistance: number; culledByBudget: number; sleepingPendulums: number;
  boundRagdolls: number; disabledRagdolls: number; simulatedRagdolls: number; sleepingRagdolls: number;
  frozenRagdolls: number; ragdollSubsteps: number; ragdollPairs: number; droppedRagdollPairs: number;
  contactRagdollPairs: number; ragdollIslands: number; colouredRagdollPairs: number;
  boundCharacters: number; activeCharacters: number; droppedCharacterEvents: number;
  snappedTeleport: number; snappedWake: number; snappedBadInput: number; resetNonFinite: number;
  chainBlocks: number; lanesUsed: number; laneOccupancy: number;
  budgetMaxChains: number; budgetRagdollSubsteps: number; budgetAction: number; budgetEstimateMs: number;
  /** Phase times in ms (zeros unless WorldSettings.timePhases). */
  times: PhaseTimes;
  contactEvents: number; droppedContactEvents: number; brokenDrives: number;
}

export interface World {
  readonly tendon: Tendon;
  /** The world's settings as it runs with them. */
  settings(): WorldSettings;
  /** Frees the world and every buffer this API allocated for it. Idempotent. */
  destroy(): void;
  /** One frame of `dt` seconds; returns the frame's stats (a fresh object). */
  step(dt: number): FrameStats;
  lastStats(): FrameStats;
  /** The whole simulated state's hash (tests, replays, cross-platform checks). */
  stateHash(): bigint;
  /** Bytes saveState would write now. */
  savedStateSize(): number;
  /** The whole World's simulation state, bit-exact (tendon/snapshot.h): a copy the caller keeps.
   *  Stepping on after restoreState(bytes) gives the bits stepping on from here gave. */
  saveState(): Uint8Array;
  /** Restores saveState's bytes into this World, or another with the same settings, archetypes
   *  and instances bound in the same order. A truncated, corrupted or foreign buffer throws
   *  TendonError (naming what is wrong) and changes nothing. */
  restoreState(bytes: Uint8Array): void;
  /** The instruction set the world's kernels run ('sse42' in the SIMD128 build, 'scalar'). */
  activeIsa(): IsaName;
  setCamera(position: Vec3Like): void;
  setMaxChains(maxChains: number): void;
  /** Unbinds every instance; returns how many. */
  unbindAll(): number;

  // ---- static world ----
  buildStaticWorld(settings: StaticWorldSettings): void;

  // ---- chains ----
  buildChainArchetype(settings: ChainArchetypeSettings): Id;
  removeChainArchetype(archetype: Id): void;
  chainBoneCount(archetype: Id): number;
  /** Binds a chain over buffers this API allocates (animated, output, root frame). */
  bindChain(binding: ChainBindingOptions): ChainInstance;

  // ---- ragdolls ----
  buildRagdollArchetype(settings: RagdollSettings): Id;
  removeRagdollArchetype(archetype: Id): void;
  ragdollPartCount(archetype: Id): number;
  bindRagdoll(binding: RagdollBindingOptions): RagdollInstance;
  applyRagdollImpulse(ragdoll: Id, part: number, impulse: Vec3Like, worldPoint: Vec3Like): void;
  wakeRagdoll(ragdoll: Id): void;
  setRagdollEnabled(ragdoll: Id, enabled: boolean): void;
  ragdollIsAsleep(ragdoll: Id): boolean;
  ragdollIsValid(ragdoll: Id): boolean;
  /** rotations: 4 floats (x y z w) per part, entry 0 ignored; strength [0, 1]. */
  setRagdollMotorTargets(ragdoll: Id, rotations: Float32Array | readonly number[], strength: number): void;
  setRagdollAcceleration(ragdoll: Id, acceleration: Vec3Like): void;
  setRagdollPartForce(ragdoll: Id, part: number, force: Vec3Like): void;
  setRagdollPartVelocity(ragdoll: Id, part: number, linear: Vec3Like, angular: Vec3Like): void;
  /** Throws every dynamic part along `direction`; returns the velocity given. */
  throwRagdoll(ragdoll: Id, direction: Vec3Like, strength: number, minSpeed: number, maxSpeed: number): Vec3;
  /** Every part's world frame as the last step left it, 10 floats a part (a copy), for any
   *  ragdoll, a character's included; a stale id throws (TENDON_ERROR_STALE_HANDLE). */
  ragdollPartTransforms(ragdoll: Id): Float32Array;
  /** The nearest ragdoll part on the ray, or null. */
  raycastRagdolls(origin: Vec3Like, direction: Vec3Like, maxDistance: number): RaycastHit | null;
  raycastStatic(origin: Vec3Like, direction: Vec3Like, maxDistance: number): RaycastHit | null;

  // ---- part drives (grab, drag, throw; docs/ragdolls.md) ----
  addPartDrive(ragdoll: Id, settings: Partial<PartDriveSettings> & { part: number }): Id;
  setPartDriveTarget(drive: Id, target: Vec3Like): void;
  removePartDrive(drive: Id): void;
  partDriveState(drive: Id): PartDriveState;
  partDriveIsValid(drive: Id): boolean;

  // ---- host bodies (docs/living-world.md) ----
  addHostBody(settings: Partial<HostBodySettings>): Id;
  removeHostBody(body: Id): void;
  hostBodyIsValid(body: Id): boolean;
  setHostBodyMotion(body: Id, transform: TransformLike, linearVelocity?: Vec3Like, angularVelocity?: Vec3Like): void;
  moveHostBodyTo(body: Id, target: TransformLike): void;
  hostBodyState(body: Id): HostBodyState;
  hostBodyCount(): number;

  // ---- characters ----
  buildCharacterArchetype(settings: CharacterSettings): Id;
  removeCharacterArchetype(archetype: Id): void;
  characterPartCount(archetype: Id): number;
  /** -1 when the archetype has no part of that name. */
  findCharacterPart(archetype: Id, name: string): number;
  characterPartInfo(archetype: Id, part: number): CharacterPartInfo;
  bindCharacter(binding: CharacterBindingOptions): CharacterInstance;
  activateCharacter(character: Id, options?: Partial<ActivateOptions>): void;
  /** space: 'auto' (default), 'world' or 'model'. */
  deactivateCharacter(character: Id, blendSeconds?: number, space?: 'auto' | 'world' | 'model'): void;
  hitCharacter(character: Id, part: number, impulse: Vec3Like, worldPoint: Vec3Like, options?: Partial<HitOptions>): void;
  goLimp(character: Id, seconds: number): void;
  setCharacterStrength(character: Id, strength: number): void;
  setCharacterAnchored(character: Id, anchored: boolean): void;
  applyCharacterImpulse(character: Id, impulse: Vec3Like): void;
  applyCharacterPartImpulse(character: Id, part: number, impulse: Vec3Like, worldPoint: Vec3Like): void;
  characterState(character: Id): CharacterState;
  /** Where the model should stand to get up from the ragdoll as it lies (legRoom in m, >= 0). */
  characterRecoveryRoot(character: Id, legRoom?: number): Transform;
  /** The character's ragdoll (0n when none). */
  characterRagdoll(character: Id): Id;
  /** The character a ragdoll belongs to (0n when none). */
  characterOfRagdoll(ragdoll: Id): Id;
  characterIsValid(character: Id): boolean;
  drainCharacterEvents(): CharacterEvent[];

  // ---- following received poses, and the ownership handover (tendon/follow.h) ----
  /** Steers the ragdoll's parts, as dynamic bodies that still push and are pushed, toward
   *  the pose the pushed samples give at the follow clock minus the interpolation delay.
   *  Saved states are refused while any ragdoll is followed. */
  followRagdoll(ragdoll: Id, settings?: Partial<FollowSettings>): void;
  /** One sample at the sender's time (s): parts 10 floats a part (the ragdoll's part count);
   *  linear and angular 3 floats a part (centre-of-mass and angular velocities) or both null.
   *  An old or duplicate sample is dropped. */
  pushFollowSample(ragdoll: Id, time: number, parts: Float32Array | number[],
    linear?: Float32Array | number[] | null, angular?: Float32Array | number[] | null): void;
  /** Hands the ragdoll to this world: it simulates on from the state it shows. */
  stopFollowing(ragdoll: Id): void;
  isFollowing(ragdoll: Id): boolean;
  /** The follow clock reads `now` (s) at the world's current simulated time and advances with it. */
  setFollowClock(now: number): void;
  followClock(): number;
  /** The ragdoll's pose for a network message at the host's `tick`: part frames and
   *  velocities (unless `velocities` is false) at the world's time, the last substep's (a
   *  substep ahead of the render-interpolated output), and the asleep flag. Copies. */
  captureRagdollPose(ragdoll: Id, tick?: number, velocities?: boolean): NetPose;
  /** The character's state for a network message (its impulse zero: add the one you apply). */
  captureNetCharacterState(character: Id): NetCharacterState;
  /** Makes the character do what a received state says; false for a stale message (an older
   *  activation, or one this character already ended), which changes nothing. */
  applyNetCharacterState(character: Id, state: NetCharacterStateLike): boolean;

  // ---- VRM avatars ----
  /** Imports a .vrm / .glb (binary glTF) or .gltf (JSON, buffers embedded) from memory and
   *  builds its chains (and character). `name` names it in errors. */
  loadVrmKind(bytes: ArrayBuffer | ArrayBufferView, options?: VrmOptions & { name?: string }): VrmKind;
  /** Binds an avatar of `kind` on buffers Tendon owns, at modelWorld (default identity). */
  bindVrmAvatar(kind: VrmKind | Id, modelWorld?: TransformLike): VrmAvatar;

  // ---- events and debug draw ----
  /** Moves the last step's contact events out (WorldSettings.contactEventCapacity > 0). */
  drainContactEvents(): ContactEvent[];
  /** Draws the debug view into line segments (DebugLines). flags: DEBUG_DRAW_* bits, default ALL. */
  drawDebug(flags?: number): DebugLines;
}

// ---- debug draw ----
export const DEBUG_DRAW: {
  readonly CHAIN_NODES: 0x001; readonly CHAIN_LINKS: 0x002; readonly CHAIN_COLLIDERS: 0x004;
  readonly RAGDOLL_PARTS: 0x008; readonly JOINTS: 0x010; readonly JOINT_LIMITS: 0x020; readonly CONTACTS: 0x040;
  readonly HOST_BODIES: 0x080; readonly SLEEPING: 0x100; readonly ALL: 0x1ff;
};
/** Line segments: `data` holds 14 floats per segment, two vertices of 7 floats each
 *  (x, y, z, r, g, b, a; colours in [0, 1]): a THREE.InterleavedBuffer of stride 7 with
 *  position at offset 0 (itemSize 3) and color at offset 3 (itemSize 4). `data` is a copy
 *  (it stays valid). Spheres, capsules, boxes and points are drawn as line outlines. */
export interface DebugLines { segmentCount: number; data: Float32Array; }

// ---- instances (buffers this API allocated in WebAssembly memory; views re-made on growth) ----
/** A pose buffer: 10 floats per bone (see TRANSFORM_FLOATS). */
export type PoseView = Float32Array;

export interface VrmKind {
  readonly id: Id;
  readonly boneCount: number;
  readonly jointCount: number;
  /** Bones in glTF node order of the file's scene (parents first): map bones by name or index. */
  readonly skeleton: { names: string[]; parents: Int32Array; restLocal: Float32Array /* copy, 10 per bone */ };
  /** The file's skins: per palette slot its avatar bone, and 16 floats (column-major) inverse bind per slot (copies). */
  readonly skins: { joints: Int32Array; inverseBinds: Float32Array }[];
  /** The character archetype the kind built (characterPartInfo gives each part's bone); 0n
   *  without one (no humanoid, or `character: false`). */
  readonly characterArchetype: Id;
  /** Frees the kind (unbind its avatars first). */
  unload(): void;
}
export interface VrmAvatar {
  readonly id: Id;
  readonly boneCount: number;
  /** The avatar's character (0n without a humanoid). */
  readonly character: Id;
  /** Write before step: where the model is (10 floats). */
  readonly modelWorld: PoseView;
  /** Write before step: the animated local pose (boneCount x 10). */
  readonly animatedLocal: PoseView;
  /** Read after step: the simulated local pose (boneCount x 10). */
  readonly outputLocal: PoseView;
  /** Read after step: every bone's world transform (boneCount x 10). */
  readonly outputWorld: PoseView;
  /** Forward kinematics into outputWorld for an avatar without a character (before step). */
  updateWorld(): void;
  unbind(): void;
}
export interface ChainBindingOptions {
  archetype: Id;
  /** Host frames colliders with bone -1 hang from (default 0). */
  colliderFrameCount?: number;
  /** Also keep world transforms of the bones (default false). */
  outputWorld?: boolean;
}
export interface ChainInstance {
  readonly id: Id;
  readonly boneCount: number;
  /** 10 floats: the chain root's parent's world transform (write before step). */
  readonly rootParentWorld: PoseView;
  readonly animatedLocal: PoseView;
  readonly outputLocal: PoseView;
  /** Empty unless bound with outputWorld. */
  readonly outputWorld: PoseView;
  readonly colliderFrames: PoseView;
  /** The nodes' world positions now (a copy). */
  nodePositions(): Vec3[];
  isSimulated(): boolean;
  unbind(): void;
}
export interface RagdollBindingOptions {
  archetype: Id;
  placement?: TransformLike;
  /** Start frames of every part (partCount x 10 floats); default: the build pose under placement. */
  startParts?: Float32Array | readonly number[];
  linearVelocity?: Vec3Like;
  angularVelocity?: Vec3Like;
  freezeWhenAsleep?: boolean;
  freezeAfterSeconds?: number;
  planarNormal?: Vec3Like;
  collideMode?: 'all' | 'static';
  enabled?: boolean;
}
export interface RagdollInstance {
  readonly id: Id;
  readonly partCount: number;
  /** Read after step: every part's world transform (partCount x 10). */
  readonly outputParts: PoseView;
  /** 10 floats the kinematic root follows while setKinematicRoot(true). */
  readonly kinematicRoot: PoseView;
  setKinematicRoot(on: boolean): void;
  unbind(): void;
}
export interface CharacterBindingOptions {
  archetype: Id;
  boneCount: number;
  outputWorld?: boolean;
  collideMode?: 'all' | 'static';
  planarNormal?: Vec3Like;
  freezeWhenSettled?: boolean;
  freezeAfterSeconds?: number;
}
export interface CharacterInstance {
  readonly id: Id;
  readonly boneCount: number;
  readonly modelWorld: PoseView;
  readonly animatedLocal: PoseView;
  readonly outputLocal: PoseView;
  readonly outputWorld: PoseView;
  unbind(): void;
}

// ---- settings and results (camelCase of the C structs; every field optional on input:
// the C defaults function fills what is left out) ----
export interface ChainBone { parent: number; restLocal?: TransformLike; virtualTip?: boolean; }
export interface ChainSettings {
  damping: number; stiffness: number; gravityScale: number; windScale: number; nodeRadius: number; gravityPush: Vec3Like;
}
export interface Collider {
  shape?: 'sphere' | 'capsule' | 'plane' | number; inside?: boolean; bone?: number; frame?: number;
  a?: Vec3Like; b?: Vec3Like; radius?: number;
}
export interface ChainArchetypeSettings {
  name?: string;
  model?: 'tendon' | 'vrm' | number;
  teleportGuard?: number;
  bones: ChainBone[];
  settings?: Partial<ChainSettings>;
  overrides?: Record<string, unknown>[];
  colliders?: Collider[];
  parentFrames?: Int32Array | readonly number[];
  hostBodyMask?: number;
  maxHostBodies?: number;
}
export interface PartSettings {
  name?: string; parent: number; pose?: TransformLike;
  shape?: 'capsule' | 'tapered_capsule' | 'sphere' | 'box' | number;
  radius?: number; topRadius?: number; bottomRadius?: number; halfHeight?: number; halfExtents?: Vec3Like;
  shapeOffset?: TransformLike; mass?: number; massShare?: number; density?: number; friction?: number;
  restitution?: number; linearDamping?: number; angularDamping?: number; gravityFactor?: number;
  [field: string]: unknown;
}
export interface RagdollSettings {
  name?: string;
  parts: PartSettings[];
  totalMass?: number;
  stabilize?: boolean;
  /** Part index pairs, flat: [a0, b0, a1, b1, ...]. */
  selfCollisionPairs?: Int32Array | readonly number[];
  collisionGroup?: number;
  collisionMask?: number;
  contactEvents?: Partial<{ enabled: boolean; minImpulse: number; minNormalSpeed: number; reportEnded: boolean }>;
}
export interface StaticWorldSettings {
  planes?: { normal: Vec3Like; offset: number }[];
  spheres?: { centre: Vec3Like; radius: number }[];
  capsules?: { a: Vec3Like; b: Vec3Like; radius: number }[];
  boxes?: { pose: TransformLike; halfExtents: Vec3Like }[];
  heightfield?: { origin: Vec3Like; samplesX: number; samplesZ: number; spacing: number; heights: Float32Array | readonly number[] };
  mesh?: { vertices: Float32Array | readonly number[] /* xyz */; indices: Uint32Array | readonly number[] };
}
export interface RaycastHit { ragdoll: Id; part: number; staticShape: number; point: Vec3; normal: Vec3; distance: number; }
export interface PartDriveSettings {
  part: number; localPoint: Vec3Like; target: Vec3Like; responseTime: number; maxForce: number;
  dampingRatio: number; breakDistance: number;
}
export interface PartDriveState { active: boolean; broken: boolean; distance: number; force: number; target: Vec3; }
export interface HostBodySettings {
  shape: 'sphere' | 'capsule' | 'box' | number; radius: number; halfHeight: number; halfExtents: Vec3Like;
  transform: TransformLike; linearVelocity: Vec3Like; angularVelocity: Vec3Like;
  collisionGroup: number; collisionMask: number; trigger: boolean; friction: number; restitution: number;
}
export interface HostBodyState { transform: Transform; linearVelocity: Vec3; angularVelocity: Vec3; overlappingParts: number; }
export interface CharacterSettings {
  name?: string;
  boneNames: string[];
  boneParents: Int32Array | readonly number[];
  /** 10 floats per bone. */
  boneRestLocal: Float32Array | readonly number[];
  humanoidBones?: { role: string; bone: number }[];
  totalMass?: number; friction?: number; linearDamping?: number; angularDamping?: number;
  driveFrequencyHz?: number; driveDampingRatio?: number; driveTorquePerKg?: number; jointFrictionPerKg?: number;
  limitsMarginDegrees?: number; collisionGroup?: number; collisionMask?: number;
  inactiveBodies?: 'none' | 'kinematic' | number;
}
export interface CharacterPartInfo {
  name: string; bone: number; parent: number; joint: number; mass: number;
  normalHalfConeDegrees: number; planeHalfConeDegrees: number; twistMinDegrees: number; twistMaxDegrees: number;
  hingeMinDegrees: number; hingeMaxDegrees: number;
}
export interface ActivateOptions {
  launchVelocity: Vec3Like; impulse: Vec3Like; strength: number; anchored: number;
  durationSeconds: number; releaseBlendSeconds: number;
}
export interface HitOptions { durationSeconds: number; blendSeconds: number; strength: number; }
export interface CharacterState {
  active: boolean; blendingOut: boolean; settled: boolean; anchored: boolean; strength: number; generation: number;
  root: Transform; rootVelocity: Vec3; speed: number; totalMass: number; unanchoredMass: number;
  /** 0 up, 1 down, 2 side. */
  facing: number; headingDegrees: number;
}
export interface CharacterEvent { type: 'started' | 'ended'; character: Id; generation: number; reason: number; time: number; }
export interface ContactEvent {
  /** 'drive_broken': a part drive let go past its break distance (bKind 'part_drive'). */
  kind: 'began' | 'ended' | 'drive_broken'; ragdoll: Id; part: number; character: Id;
  bKind: 'static' | 'ragdoll' | 'host_body' | 'part_drive'; bRagdoll: Id; bPart: number; bHostBody: Id;
  /** The drive that broke ('drive_broken'), still valid until removed. */
  bDrive: Id;
  point: Vec3; normal: Vec3; normalSpeed: number; impulse: number;
  /** m: a broken drive's point-to-target distance when it let go; 0 otherwise. */
  distance: number;
  time: number;
}
export interface VrmOptions {
  character?: boolean;
  totalMass?: number;
  limitSource?: 'table' | 'clips' | number;
  /** The character's parts while it stands animated: 'none' (default: ragdolls pass through
   *  it) or 'kinematic' (kinematic copies that thrown ragdolls land on; docs/living-world.md). */
  inactiveBodies?: 'none' | 'kinematic' | number;
}

// ---- network snapshots and following ----
/** tendon::FollowSettings (seconds, metres). */
export interface FollowSettings {
  /** s, (0, 10]: how far behind the follow clock the pose shown is. */
  interpolationDelaySeconds: number;
  /** s, [0, 10]: extrapolation past the newest sample, then held; 0: never. */
  maxExtrapolationSeconds: number;
  /** s, [0, 10]: 0 reaches the target each frame; larger: softer. */
  responseSeconds: number;
  /** m/s, (0, 1e4]: a part's steering speed cap. */
  maxSpeed: number;
  /** m, > 0: further from the target, the whole body is placed; Infinity: never. */
  snapDistance: number;
}
/** tendon::NetPoseSettings: the precision a pose is sent at (both sides must agree). */
export interface NetPoseSettings {
  /** m, [1e-5, 1]: a part's position relative to the root, per axis. */
  positionPrecision: number;
  /** m: beyond it from the root a part is sent as floats. */
  positionRange: number;
  /** [6, 15] bits per smallest-three rotation component. */
  rotationBits: number;
  /** 0: velocities are not sent (decoded as zeros). */
  includeVelocities: number;
  linearPrecision: number; linearRange: number;
  angularPrecision: number; angularRange: number;
}
/** A pose as a message carries it: parts 10 floats a part (translation, rotation xyzw,
 *  scale), part 0 the root; linear and angular 3 floats a part, or null. */
export interface NetPose {
  tick: number;
  parts: Float32Array;
  linear: Float32Array | null;
  angular: Float32Array | null;
  asleep: boolean;
  hasVelocities: boolean;
}
export type NetPoseLike = Partial<NetPose> & { parts: Float32Array | number[] };
/** tendon::NetCharacterState: a character's state changes. */
export interface NetCharacterState {
  /** The sender's activation count. */
  generation: number;
  active: boolean; anchored: boolean; limp: boolean;
  /** [0, 25.5] s, sent in 0.1 s steps (limp only). */
  limpSeconds: number;
  /** [0, 1], sent in 1/255 steps. */
  strength: number;
  /** N s on the whole body, applied once (zero: none). */
  impulse: Vec3;
}
export type NetCharacterStateLike = Partial<Omit<NetCharacterState, 'impulse'>> & { impulse?: Vec3Like };
