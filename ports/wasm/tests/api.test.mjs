// ports/wasm/tests/api.test.mjs: the JavaScript API over both WebAssembly builds: bind, step
// and read poses; every call family refuses bad input with Tendon's message, field and item;
// no leak over 10,000 bind/unbind cycles; Godette bound from an ArrayBuffer swings her hair.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';

import { DEBUG_DRAW, flavours, horizontalChain, loadTendon, refusal, sharedData } from './helpers.mjs';

const godettePath = path.join(sharedData, 'vrm', 'godette', 'Godette_vrm_v4.vrm');

for (const flavour of flavours) {
  describe(`${flavour.name} build`, async () => {
    const tendon = await loadTendon({ simd: flavour.simd });

    test('reports the kernel it loaded and runs it', () => {
      assert.equal(tendon.kernel, flavour.kernel);
      const world = tendon.createWorld();
      assert.equal(world.activeIsa(), flavour.simd ? 'sse42' : 'scalar');
      world.destroy();
    });

    test('a bound chain sags under gravity and its output pose view shows it', () => {
      const world = tendon.createWorld();
      const archetype = world.buildChainArchetype(horizontalChain(5));
      const chain = world.bindChain({ archetype });
      assert.equal(chain.boneCount, 5);
      for (let i = 1; i < 5; ++i) chain.animatedLocal.set([0.2, 0, 0, 0, 0, 0, 1, 1, 1, 1], 10 * i);
      const tipBefore = chain.nodePositions()[4];
      for (let i = 0; i < 60; ++i) world.step(1 / 60);
      const tipAfter = chain.nodePositions()[4];
      assert.ok(tipAfter.y < tipBefore.y - 0.05, `the tip fell: ${tipBefore.y} -> ${tipAfter.y}`);
      // The first bone's local rotation turned away from the rest (identity) rotation.
      const out = chain.outputLocal;
      assert.ok(Math.abs(out[6] - 1) > 1e-3, `bone 0 turned (w ${out[6]})`);
      const stats = world.lastStats();
      assert.equal(stats.boundChains, 1);
      assert.ok(stats.simulatedChains === 1);
      chain.unbind();
      world.destroy();
    });

    test('world settings are refused by field', () => {
      const e = refusal(assert, () => tendon.createWorld({ fixedHz: -5 }));
      assert.equal(e.call, 'tendon_world_create');
      assert.match(e.field, /fixed_hz/);
      assert.match(e.message, /fixed_hz/);
      assert.equal(e.codeName, 'TENDON_ERROR_OUT_OF_RANGE');
    });

    test('chain archetypes and bindings refuse bad bones and stale ids', () => {
      const world = tendon.createWorld();
      const rope = horizontalChain(3);
      rope.bones[2].parent = 7;
      const e = refusal(assert, () => world.buildChainArchetype(rope));
      assert.equal(e.codeName, 'TENDON_ERROR_PARENT_OUT_OF_RANGE');
      assert.match(e.field, /bones\[2\]\.parent/);
      assert.equal(e.item, 2);
      const stale = refusal(assert, () => world.bindChain({ archetype: 12345n }));
      assert.equal(stale.codeName, 'TENDON_ERROR_STALE_HANDLE');
      world.destroy();
    });

    test('ragdoll calls refuse empty archetypes, stale ragdolls and non-finite values', () => {
      const world = tendon.createWorld();
      const empty = refusal(assert, () => world.buildRagdollArchetype({ parts: [] }));
      assert.equal(empty.codeName, 'TENDON_ERROR_EMPTY');
      const archetype = world.buildRagdollArchetype({ parts: [{ parent: -1, shape: 'sphere', radius: 0.2 }] });
      const ragdoll = world.bindRagdoll({ archetype, placement: { translation: [0, 2, 0] } });
      const nan = refusal(assert, () => world.applyRagdollImpulse(ragdoll.id, 0, [NaN, 0, 0], [0, 2, 0]));
      assert.equal(nan.codeName, 'TENDON_ERROR_NOT_FINITE');
      const part = refusal(assert, () => world.applyRagdollImpulse(ragdoll.id, 9, [1, 0, 0], [0, 2, 0]));
      assert.equal(part.codeName, 'TENDON_ERROR_BAD_REFERENCE');
      assert.match(part.message, /part/);
      ragdoll.unbind();
      const gone = refusal(assert, () => world.wakeRagdoll(ragdoll.id ?? 4294967296n));
      assert.equal(gone.codeName, 'TENDON_ERROR_STALE_HANDLE');
      world.destroy();
    });

    test('a ragdoll falls onto the static world, is hit by a ray, dragged by a drive and thrown', () => {
      const world = tendon.createWorld();
      world.buildStaticWorld({ planes: [{ normal: [0, 1, 0], offset: 0 }] });
      const archetype = world.buildRagdollArchetype({ parts: [{ parent: -1, shape: 'sphere', radius: 0.2, mass: 10 }] });
      const ragdoll = world.bindRagdoll({ archetype, placement: { translation: [0, 2, 0] } });
      for (let i = 0; i < 120; ++i) world.step(1 / 60);
      const y = ragdoll.outputParts[1];
      assert.ok(Math.abs(y - 0.2) < 0.02, `rests on the plane at its radius: y ${y}`);
      const hit = world.raycastRagdolls([0, 0.2, 3], [0, 0, -1], 10);
      assert.ok(hit !== null);
      assert.equal(hit.ragdoll, ragdoll.id);
      assert.ok(Math.abs(hit.point.z - 0.2) < 1e-3, `hit the sphere's front: ${hit.point.z}`);
      const drive = world.addPartDrive(ragdoll.id, { part: 0, target: [0, 1.5, 0], responseTime: 0.1 });
      for (let i = 0; i < 60; ++i) world.step(1 / 60);
      assert.ok(ragdoll.outputParts[1] > 1.2, `dragged up: y ${ragdoll.outputParts[1]}`);
      assert.equal(world.partDriveState(drive).active, true);
      const badTarget = refusal(assert, () => world.setPartDriveTarget(drive, [0, Infinity, 0]));
      assert.equal(badTarget.codeName, 'TENDON_ERROR_NOT_FINITE');
      world.removePartDrive(drive);
      const stale = refusal(assert, () => world.partDriveState(drive));
      assert.equal(stale.codeName, 'TENDON_ERROR_STALE_HANDLE');
      const v = world.throwRagdoll(ragdoll.id, [1, 0, 0], 1, 2, 2);
      assert.ok(Math.abs(v.x - 2) < 1e-4, `thrown at 2 m/s: ${v.x}`);
      world.destroy();
    });

    test('ragdollPartTransforms copies the part frames the step wrote, and refuses a stale ragdoll', () => {
      const world = tendon.createWorld();
      const archetype = world.buildRagdollArchetype({
        parts: [{ parent: -1, shape: 'sphere', radius: 0.2, mass: 10 },
          { parent: 0, shape: 'sphere', radius: 0.1, mass: 2, pose: { translation: [0, -0.4, 0] } }],
      });
      const ragdoll = world.bindRagdoll({ archetype, placement: { translation: [1, 3, 0] } });
      for (let i = 0; i < 10; ++i) world.step(1 / 60);
      const frames = world.ragdollPartTransforms(ragdoll.id);
      assert.equal(frames.length, 20, '10 floats a part');
      assert.deepEqual(Array.from(frames), Array.from(ragdoll.outputParts), 'what output_parts holds');
      assert.ok(frames[1] < 3, `it fell: y ${frames[1]}`);
      world.step(1 / 60);
      assert.notEqual(frames[1], ragdoll.outputParts[1], 'a copy: the next step leaves it as it was');
      const id = ragdoll.id;
      ragdoll.unbind();
      const stale = refusal(assert, () => world.ragdollPartTransforms(id));
      assert.equal(stale.codeName, 'TENDON_ERROR_STALE_HANDLE');
      assert.equal(stale.field, 'ragdoll');
      assert.match(stale.message, /tendon_get_ragdoll_part_transforms: .*null or stale/);
      world.destroy();
    });

    test('a drive pulled past its break distance is one drive_broken event naming it', () => {
      const world = tendon.createWorld();
      world.buildStaticWorld({ planes: [{ normal: [0, 1, 0], offset: 0 }] });
      const archetype = world.buildRagdollArchetype({ parts: [{ parent: -1, shape: 'sphere', radius: 0.2, mass: 10 }] });
      const ragdoll = world.bindRagdoll({ archetype, placement: { translation: [0, 0.2, 0] } });
      const drive = world.addPartDrive(ragdoll.id, { part: 0, target: [0, 0.2, 0], breakDistance: 0.5, maxForce: 1 });
      world.step(1 / 60);
      world.drainContactEvents();
      world.setPartDriveTarget(drive, [0, 5, 0]);  // 4.8 m away: a 1 N drive cannot follow
      world.step(1 / 60);
      const broken = world.drainContactEvents().filter((e) => e.kind === 'drive_broken');
      assert.equal(broken.length, 1);
      assert.equal(broken[0].bKind, 'part_drive');
      assert.equal(broken[0].bDrive, drive);
      assert.equal(broken[0].ragdoll, ragdoll.id);
      assert.ok(broken[0].distance > 0.5, `broke past its distance: ${broken[0].distance}`);
      world.step(1 / 60);
      assert.equal(world.drainContactEvents().filter((e) => e.kind === 'drive_broken').length, 0, 'reported once');
      assert.equal(world.partDriveState(drive).broken, true);
      world.destroy();
    });

    test('a saved state replays bit for bit, and a cut or corrupted one is refused and changes nothing', () => {
      const world = tendon.createWorld();
      world.buildStaticWorld({ planes: [{ normal: [0, 1, 0], offset: 0 }] });
      const archetype = world.buildRagdollArchetype({ parts: [{ parent: -1, shape: 'box', halfExtents: [0.2, 0.2, 0.2], mass: 10 }] });
      for (let i = 0; i < 4; ++i) world.bindRagdoll({ archetype, placement: { translation: [0.3 * i, 1 + 0.5 * i, 0] } });
      for (let i = 0; i < 20; ++i) world.step(1 / 60);
      const saved = world.saveState();
      assert.equal(saved.length, world.savedStateSize());
      const hashes = [];
      for (let i = 0; i < 30; ++i) { world.step(1 / 60); hashes.push(world.stateHash()); }
      world.restoreState(saved);
      for (let i = 0; i < 30; ++i) { world.step(1 / 60); assert.equal(world.stateHash(), hashes[i], `frame ${i} after the restore`); }
      const before = world.stateHash();
      const cut = refusal(assert, () => world.restoreState(saved.subarray(0, saved.length - 1)));
      assert.match(cut.message, /length|truncat|short/i);
      const flipped = saved.slice();
      flipped[flipped.length >> 1] ^= 0x10;
      const bad = refusal(assert, () => world.restoreState(flipped));
      assert.match(bad.message, /checksum/i);
      refusal(assert, () => world.restoreState([1, 2, 3]));
      assert.equal(world.stateHash(), before, 'refused buffers changed nothing');
      world.destroy();
    });

    // A capsule with a ball hanging below it: two parts, so every array holds more than a root.
    const twoParts = {
      parts: [{ parent: -1, shape: 'capsule', radius: 0.1, halfHeight: 0.2, mass: 10 },
        { parent: 0, shape: 'sphere', radius: 0.1, mass: 2, pose: { translation: [0, -0.45, 0] }, jointAnchor: [0, -0.3, 0] }],
    };
    const maxPartDistance = (a, b) => {
      let d = 0;
      for (let i = 0; i < a.length; i += 10) d = Math.max(d, Math.hypot(a[i] - b[i], a[i + 1] - b[i + 1], a[i + 2] - b[i + 2]));
      return d;
    };

    test('network snapshots: a captured pose encodes in full and as a delta, decodes within its precision, and bad input is refused by field', () => {
      // Without render interpolation the output shows the state a pose captures.
      const world = tendon.createWorld({ renderInterpolation: false });
      world.buildStaticWorld({ planes: [{ normal: [0, 1, 0], offset: 0 }] });
      const ragdoll = world.bindRagdoll({ archetype: world.buildRagdollArchetype(twoParts), placement: { translation: [0, 2, 0] } });
      for (let i = 0; i < 20; ++i) world.step(1 / 60);
      const pose = world.captureRagdollPose(ragdoll.id, 20);
      assert.equal(pose.tick, 20);
      assert.deepEqual(Array.from(pose.parts), Array.from(ragdoll.outputParts), 'the state the output shows');
      assert.equal(pose.linear.length, 6);
      assert.ok(pose.linear[1] < -1, `falling: vy ${pose.linear[1]}`);
      assert.equal(pose.asleep, false);
      const full = tendon.encodeNetPose(pose);
      assert.ok(full.length <= tendon.maxNetPoseBytes(2), `${full.length} bytes`);
      assert.equal(tendon.netPoseBaselineTick(full), -1, 'a full pose needs no baseline');
      assert.equal(tendon.netPosePartCount(full), 2);
      assert.deepEqual(tendon.encodeNetPose(pose), full, 'the same pose, the same bytes');
      const received = tendon.decodeNetPose(full);
      assert.equal(received.tick, 20);
      assert.ok(maxPartDistance(received.parts, pose.parts) < 2e-3, 'within 2 mm');
      // The default settings send no velocities: they decode as null, not as zeros that
      // following would take for a body standing still at every sample.
      assert.equal(received.hasVelocities, false);
      assert.equal(received.linear, null);
      assert.equal(received.angular, null);
      const withVelocities = { includeVelocities: 1 };
      const moving = tendon.decodeNetPose(tendon.encodeNetPose(pose, null, withVelocities), null, withVelocities);
      assert.equal(moving.hasVelocities, true);
      assert.ok(Math.abs(moving.linear[1] - pose.linear[1]) < 0.01, `vy ${moving.linear[1]} against ${pose.linear[1]}`);
      // A view over the module's memory (an instance's output) is taken as it is now.
      assert.deepEqual(tendon.encodeNetPose({ tick: 20, parts: ragdoll.outputParts }), tendon.encodeNetPose({ tick: 20, parts: pose.parts }));
      world.step(1 / 60);
      const next = world.captureRagdollPose(ragdoll.id, 21);
      const delta = tendon.encodeNetPose(next, received);
      assert.equal(tendon.netPoseBaselineTick(delta), 20);
      assert.ok(delta.length < full.length, `a delta is smaller: ${delta.length} < ${full.length} bytes`);
      refusal(assert, () => tendon.decodeNetPose(delta));
      const decoded = tendon.decodeNetPose(delta, received);
      assert.equal(decoded.tick, 21);
      assert.ok(maxPartDistance(decoded.parts, next.parts) < 2e-3, 'within 2 mm');
      const flipped = full.slice();
      flipped[full.length - 2] ^= 0x04;
      refusal(assert, () => tendon.decodeNetPose(flipped));
      refusal(assert, () => tendon.decodeNetPose(full.subarray(0, 3)));
      const bits = refusal(assert, () => tendon.encodeNetPose(pose, null, { rotationBits: 3 }));
      assert.match(bits.field, /rotation_bits/);
      const halves = refusal(assert, () => tendon.encodeNetPose({ ...pose, linear: pose.linear.subarray(0, 3) }));
      assert.equal(halves.field, 'pose.linear');
      refusal(assert, () => tendon.decodeNetPose([1, 2, 3]));
      const stale = ragdoll.id;
      ragdoll.unbind();
      assert.equal(refusal(assert, () => world.captureRagdollPose(stale)).codeName, 'TENDON_ERROR_STALE_HANDLE');
      world.destroy();
    });

    test('following: a receiver ragdoll follows the sender through samples, refuses saved states meanwhile, and simulates on after the handover', () => {
      const sender = tendon.createWorld();
      const receiver = tendon.createWorld();
      for (const w of [sender, receiver]) w.buildStaticWorld({ planes: [{ normal: [0, 1, 0], offset: 0 }] });
      const body = sender.bindRagdoll({ archetype: sender.buildRagdollArchetype(twoParts), placement: { translation: [0, 2, 0] } });
      const copy = receiver.bindRagdoll({ archetype: receiver.buildRagdollArchetype(twoParts), placement: { translation: [1, 1, 0] } });
      receiver.followRagdoll(copy.id, { interpolationDelaySeconds: 0.1 });
      assert.equal(receiver.isFollowing(copy.id), true);
      // Both worlds render-interpolate (the default): a pose captured at a frame is the state
      // at its tick, so the receiver's output shows the sender's output 0.1 s (6 frames)
      // behind, through the fall and the landing, not a frame later still.
      const history = [];
      let behind = 0;
      for (let f = 1; f <= 60; ++f) {
        sender.step(1 / 60);
        history.push(Float32Array.from(body.outputParts));
        const pose = sender.captureRagdollPose(body.id, f);
        receiver.pushFollowSample(copy.id, f / 60, pose.parts, pose.linear, pose.angular);
        receiver.step(1 / 60);
        if (f > 30) behind = Math.max(behind, maxPartDistance(copy.outputParts, history[f - 7]));
      }
      assert.ok(behind < 0.005, `within 5 mm of the sender 0.1 s earlier from 0.5 s on: ${behind} m`);
      assert.equal(refusal(assert, () => receiver.saveState()).codeName, 'TENDON_ERROR_IN_USE');
      const counts = refusal(assert, () => receiver.pushFollowSample(copy.id, 2, history[0], [0, 0, 0], null));
      assert.equal(counts.field, 'angular');
      refusal(assert, () => receiver.pushFollowSample(copy.id, 2, history[0].subarray(0, 10)));
      receiver.stopFollowing(copy.id);
      assert.equal(receiver.isFollowing(copy.id), false);
      const handed = Float32Array.from(copy.outputParts);
      for (let i = 0; i < 30; ++i) receiver.step(1 / 60);
      assert.ok(copy.outputParts.every(Number.isFinite), 'finite after the handover');
      assert.ok(maxPartDistance(copy.outputParts, handed) < 0.5, 'it simulates on from where it was shown');
      assert.ok(receiver.saveState().length > 0, 'saved states again once nothing is followed');
      receiver.setFollowClock(5);
      assert.equal(receiver.followClock(), 5);
      sender.destroy();
      receiver.destroy();
    });

    test('character state messages round-trip within their steps and refuse out-of-range fields', () => {
      const state = { generation: 3, active: true, anchored: false, limp: true, limpSeconds: 1.24, strength: 0.5, impulse: [0, 0, 40] };
      const bytes = tendon.encodeNetCharacterState(state);
      assert.ok(bytes.length <= 18, `${bytes.length} bytes`);
      const back = tendon.decodeNetCharacterState(bytes);
      assert.equal(back.generation, 3);
      assert.deepEqual([back.active, back.anchored, back.limp], [true, false, true]);
      assert.ok(Math.abs(back.limpSeconds - 1.2) < 1e-6, `0.1 s steps: ${back.limpSeconds}`);
      assert.ok(Math.abs(back.strength - 0.5) <= 0.5 / 255 + 1e-6, `1/255 steps: ${back.strength}`);
      assert.deepEqual(back.impulse, { x: 0, y: 0, z: 40 });
      refusal(assert, () => tendon.encodeNetCharacterState({ ...state, strength: 2 }));
      refusal(assert, () => tendon.decodeNetCharacterState(bytes.subarray(0, 1)));
    });

    test('host bodies push ragdolls, report contacts, and refuse bad shapes by field', () => {
      const world = tendon.createWorld({ contactEventCapacity: 256 });
      const bad = refusal(assert, () => world.addHostBody({ shape: 'sphere', radius: -1 }));
      assert.equal(bad.field, 'radius');
      assert.match(bad.message, /radius/);
      const badShape = refusal(assert, () => world.addHostBody({ shape: 'cone' }));
      assert.match(badShape.message, /cone/);
      const archetype = world.buildRagdollArchetype({
        parts: [{ parent: -1, shape: 'sphere', radius: 0.2, mass: 10 }], contactEvents: { enabled: true },
      });
      const ragdoll = world.bindRagdoll({ archetype, placement: { translation: [0, 0.2, 0] } });
      const body = world.addHostBody({ shape: 'sphere', radius: 0.3, transform: { translation: [-1, 0.2, 0] } });
      let events = [];
      for (let i = 0; i < 60; ++i) {
        world.setHostBodyMotion(body, { translation: [-1 + i * 0.05, 0.2, 0] }, [3, 0, 0]);
        world.step(1 / 60);
        events = events.concat(world.drainContactEvents());
      }
      assert.ok(ragdoll.outputParts[0] > 0.5, `pushed along +x: ${ragdoll.outputParts[0]}`);
      const touch = events.find((e) => e.kind === 'began' && e.bKind === 'host_body');
      assert.ok(touch, 'a contact with the host body was reported');
      assert.equal(touch.bHostBody, body);
      assert.equal(world.hostBodyCount(), 1);
      world.removeHostBody(body);
      assert.equal(world.hostBodyIsValid(body), false);
      world.destroy();
    });

    test('the debug draw gives line segments and refuses unknown flags', () => {
      const world = tendon.createWorld();
      const archetype = world.buildChainArchetype(horizontalChain(4));
      world.bindChain({ archetype });
      world.step(1 / 60);
      const lines = world.drawDebug(DEBUG_DRAW.CHAIN_LINKS);
      assert.equal(lines.segmentCount, 3);
      assert.equal(lines.data.length, 3 * 14);
      const e = refusal(assert, () => world.drawDebug(0x8000));
      assert.equal(e.codeName, 'TENDON_ERROR_OUT_OF_RANGE');
      world.destroy();
    });

    test('malformed glTF is refused with the importer message and the module lives on', () => {
      const world = tendon.createWorld();
      // A binary glTF whose JSON chunk ends mid-object (nlohmann-json's parser, which must not throw).
      const json = new TextEncoder().encode('{"asset": {"version": "2.0"   ');
      const glb = new Uint8Array(20 + json.length);
      const view = new DataView(glb.buffer);
      glb.set([0x67, 0x6c, 0x54, 0x46]);
      view.setUint32(4, 2, true);
      view.setUint32(8, glb.length, true);
      view.setUint32(12, json.length, true);
      view.setUint32(16, 0x4e4f534a, true);  // "JSON"
      glb.set(json, 20);
      const e = refusal(assert, () => world.loadVrmKind(glb, { name: 'cut.vrm' }));
      assert.equal(e.call, 'tendon_load_vrm_kind_from_memory');
      assert.match(e.message, /cut\.vrm: JSON chunk.*unexpected end of input/);
      world.step(1 / 60);  // still running: no abort
      world.destroy();
    });

    test('pose views are re-made after the memory grows, and old ones detach', () => {
      const world = tendon.createWorld();
      const chain = world.bindChain({ archetype: world.buildChainArchetype(horizontalChain(5)) });
      const before = chain.outputLocal;
      const generation = tendon.memoryGeneration;
      const big = tendon.raw._malloc(tendon.heapBytes());  // more than is free: the memory grows
      assert.notEqual(big, 0);
      tendon.raw._free(big);
      assert.ok(tendon.memoryGeneration > generation, 'the growth was seen');
      assert.equal(before.length, 0, 'a view over the old buffer is detached');
      world.step(1 / 60);
      const after = chain.outputLocal;
      assert.equal(after.length, 50);
      assert.equal(after.buffer, tendon.buffer);
      const norm = Math.hypot(after[3], after[4], after[5], after[6]);
      assert.ok(Math.abs(norm - 1) < 1e-4, `the new view reads the pose: bone 0's rotation is unit (${norm})`);
      world.destroy();
    });

    test('no leak across 10,000 chain bind/unbind cycles', () => {
      const world = tendon.createWorld();
      const archetype = world.buildChainArchetype(horizontalChain(4));
      for (let i = 0; i < 100; ++i) world.bindChain({ archetype }).unbind();  // warm the world's own pools
      const allocated = tendon.allocatedBytes();
      const heap = tendon.heapBytes();
      for (let i = 0; i < 10000; ++i) {
        const chain = world.bindChain({ archetype });
        chain.unbind();
      }
      // A leak of one byte per cycle would show as 10,000; malloc's own bookkeeping moves a few.
      assert.ok(tendon.allocatedBytes() <= allocated + 64, `malloc held ${allocated} bytes, now ${tendon.allocatedBytes()}`);
      assert.equal(tendon.heapBytes(), heap, 'the memory did not grow');
      world.destroy();
    });

    test('Godette from an ArrayBuffer: skeleton by glTF node, hair that swings, and character calls', { skip: !fs.existsSync(godettePath) && 'no ../shared/data' }, () => {
      const world = tendon.createWorld();
      const file = fs.readFileSync(godettePath);
      const bytes = file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength);
      const kind = world.loadVrmKind(bytes, { name: 'Godette_vrm_v4.vrm' });
      assert.equal(kind.skeleton.names.length, kind.boneCount);
      assert.equal(kind.skeleton.parents[0], -1);
      for (let i = 1; i < kind.boneCount; ++i) assert.ok(kind.skeleton.parents[i] < i, 'parents come first');
      assert.ok(kind.jointCount > 0, 'she has spring joints');
      const avatar = world.bindVrmAvatar(kind);
      assert.notEqual(avatar.character, 0n);
      avatar.animatedLocal.set(kind.skeleton.restLocal);
      const rest = Float32Array.from(kind.skeleton.restLocal);
      // Walk her sideways: the hair's local rotations leave the rest pose.
      for (let i = 0; i < 60; ++i) {
        avatar.modelWorld[0] = Math.sin(i / 6);
        world.step(1 / 60);
      }
      const out = avatar.outputLocal;
      const hairBones = kind.skeleton.names.map((n, i) => [n, i]).filter(([n]) => /hair/i.test(n)).map(([, i]) => i);
      assert.ok(hairBones.length > 0, 'Godette names her hair bones');
      let swing = 0;
      for (const b of hairBones) for (let k = 3; k < 7; ++k) swing = Math.max(swing, Math.abs(out[10 * b + k] - rest[10 * b + k]));
      assert.ok(swing > 0.01, `the hair swung (largest quaternion change ${swing})`);
      world.activateCharacter(avatar.character);
      world.hitCharacter(avatar.character, 0, [0, 0, 50], [0, 1, 0]);
      for (let i = 0; i < 10; ++i) world.step(1 / 60);
      assert.equal(world.characterState(avatar.character).active, true);
      // Her state as a network message activates a second Godette; an older one changes nothing.
      const sent = world.captureNetCharacterState(avatar.character);
      assert.equal(sent.active, true);
      assert.ok(sent.generation >= 1);
      const twin = world.bindVrmAvatar(kind, { translation: [3, 0, 0] });
      twin.animatedLocal.set(kind.skeleton.restLocal);
      const received = tendon.decodeNetCharacterState(tendon.encodeNetCharacterState(sent));
      assert.equal(world.applyNetCharacterState(twin.character, { ...received, generation: 0 }), false, 'older than what it shows');
      assert.equal(world.characterState(twin.character).active, false);
      assert.equal(world.applyNetCharacterState(twin.character, received), true);
      assert.equal(world.characterState(twin.character).active, true);
      assert.equal(world.captureNetCharacterState(twin.character).generation, sent.generation, 'the sender\'s activation count');
      twin.unbind();
      for (let i = 0; i < 90; ++i) world.step(1 / 60);
      const up = world.characterRecoveryRoot(avatar.character);
      // (No ground here: she is still falling; the root turns about the vertical only.)
      assert.ok(Math.abs(up.rotation.x) < 1e-4 && Math.abs(up.rotation.z) < 1e-4, `the recovery root stands upright: ${JSON.stringify(up.rotation)}`);
      assert.ok([up.translation.x, up.translation.y, up.translation.z].every(Number.isFinite), 'and is finite');
      refusal(assert, () => world.characterRecoveryRoot(avatar.character, -1));
      const stale = refusal(assert, () => world.goLimp(avatar.character + 77n, 1));
      assert.equal(stale.codeName, 'TENDON_ERROR_STALE_HANDLE');
      const garbage = refusal(assert, () => world.loadVrmKind(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]), { name: 'junk.vrm' }));
      assert.match(garbage.message, /junk\.vrm/);
      avatar.unbind();
      kind.unload();
      world.destroy();
    });

    test('a VRM kind names its character archetype, and inactiveBodies kinematic gives the standing avatar a body a ragdoll lands on', { skip: !fs.existsSync(godettePath) && 'no ../shared/data' }, () => {
      const world = tendon.createWorld();
      world.buildStaticWorld({ planes: [{ normal: [0, 1, 0], offset: 0 }] });
      const file = fs.readFileSync(godettePath);
      const bytes = file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength);
      const bad = refusal(assert, () => world.loadVrmKind(bytes, { name: 'Godette_vrm_v4.vrm', inactiveBodies: 'solid' }));
      assert.match(bad.field, /inactiveBodies$/);
      const badNumber = refusal(assert, () => world.loadVrmKind(bytes, { name: 'Godette_vrm_v4.vrm', inactiveBodies: 7 }));
      assert.equal(badNumber.codeName, 'TENDON_ERROR_OUT_OF_RANGE');
      assert.match(badNumber.message, /tendon_load_vrm_kind_from_memory: .*inactive_?[bB]odies.*enum/);
      const ghost = world.loadVrmKind(bytes, { name: 'Godette_vrm_v4.vrm' });
      const solid = world.loadVrmKind(bytes, { name: 'Godette_vrm_v4.vrm', inactiveBodies: 'kinematic' });
      assert.notEqual(solid.characterArchetype, 0n);
      const parts = world.characterPartCount(solid.characterArchetype);
      assert.ok(parts > 8, `a humanoid's parts: ${parts}`);
      const hips = world.characterPartInfo(solid.characterArchetype, 0);
      assert.match(solid.skeleton.names[hips.bone], /hips|pelvis/i, 'part 0 sits on the hips (pelvis) bone');
      // Each avatar stands in its rest pose; a ball drops on each one's head.
      const landing = [];
      for (const [kind, x] of [[ghost, -2], [solid, 2]]) {
        const avatar = world.bindVrmAvatar(kind, { translation: [x, 0, 0] });
        avatar.animatedLocal.set(kind.skeleton.restLocal);
        const ball = world.buildRagdollArchetype({ parts: [{ parent: -1, shape: 'sphere', radius: 0.1, mass: 2 }] });
        landing.push({ avatar, ball: world.bindRagdoll({ archetype: ball, placement: { translation: [x, 2.5, 0] } }), y: 2.5, stoppedAt: null });
      }
      // Where each ball first stops falling (its height stops going down): the ground, or her.
      for (let i = 0; i < 90; ++i) {
        world.step(1 / 60);
        for (const l of landing) {
          const y = l.ball.outputParts[1];
          if (l.stoppedAt === null && l.y < 2.4 && y >= l.y - 1e-4) l.stoppedAt = l.y;  // once it fell
          l.y = y;
        }
      }
      assert.ok(landing[0].stoppedAt !== null && landing[0].stoppedAt < 0.2, `through the avatar without bodies, to the ground: ${landing[0].stoppedAt}`);
      assert.ok(landing[1].stoppedAt !== null && landing[1].stoppedAt > 0.6, `stopped by the kinematic copy: ${landing[1].stoppedAt}`);
      world.destroy();
    });
  });
}
