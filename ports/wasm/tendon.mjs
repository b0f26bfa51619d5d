// ports/wasm/tendon.mjs: Tendon's JavaScript API over its C ABI compiled to WebAssembly.
//
// What it does: loads the SIMD128 or the scalar build (simd/ or scalar/ beside this file,
// picked with WebAssembly.validate unless told), and wraps the C calls: structs are written
// into WebAssembly memory by the layouts tendon_layouts.mjs gives (generated from tendon_c.h
// at build time, checked by the compiler), every refusal becomes a TendonError carrying
// Tendon's message, field and item, and pose buffers are typed-array views over the memory
// (re-made when it grows). tendon.d.ts documents every call.
// What it does NOT do: threads, the host callbacks (wind sampler, simulate predicate), or
// copy poses per frame.
// Threading: one thread. Memory: each call's temporary structs are freed before it returns;
// an instance's buffers when it is unbound, everything of a world when it is destroyed.
import { layouts } from './tendon_layouts.mjs';

export const TRANSFORM_FLOATS = 10;
// A ragdoll's most parts (kernel/rigid/ragdoll_archetype.h, kMaxRagdollParts).
const kMaxRagdollParts = 64;
// tendon_c.h's TENDON_MAX_NET_CHARACTER_STATE_BYTES.
const kMaxNetCharacterStateBytes = 18;
export const DEBUG_DRAW = Object.freeze({
  CHAIN_NODES: 0x001, CHAIN_LINKS: 0x002, CHAIN_COLLIDERS: 0x004, RAGDOLL_PARTS: 0x008, JOINTS: 0x010,
  JOINT_LIMITS: 0x020, CONTACTS: 0x040, HOST_BODIES: 0x080, SLEEPING: 0x100, ALL: 0x1ff,
});

// The smallest module that uses a SIMD128 instruction (i8x16.splat, i8x16.popcnt): an engine
// without SIMD refuses to validate it, and would refuse the SIMD build the same way.
const kSimdProbe = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0,
  65, 0, 253, 15, 253, 98, 11]);

export function simdSupported() {
  try {
    return WebAssembly.validate(kSimdProbe);
  } catch {
    return false;
  }
}

export class TendonError extends Error {
  constructor(call, code, codeName, message, field, item) {
    super(`${call}: ${message || codeName}`);
    this.name = 'TendonError';
    this.call = call;
    this.code = code;
    this.codeName = codeName;
    this.field = field;
    this.item = item;
  }
}

const isNode = typeof process === 'object' && process.versions != null && process.versions.node != null;

export async function loadTendon(options = {}) {
  const want = options.simd ?? 'auto';
  const useSimd = want === 'auto' ? simdSupported() : Boolean(want);
  if (useSimd && !simdSupported()) {
    throw new TendonError('loadTendon', 0, 'TENDON_ERROR_UNSUPPORTED',
      'this engine has no WebAssembly SIMD128: load with {simd: false}', 'simd', -1);
  }
  const flavour = useSimd ? 'simd' : 'scalar';
  const base = new URL(options.baseUrl ?? './', import.meta.url);
  const loaderUrl = new URL(`${flavour}/tendon.mjs`, base);
  const wasmUrl = new URL(`${flavour}/tendon.wasm`, base);
  let wasmBinary = options.wasmBinary;
  if (wasmBinary == null && isNode) {
    // Emscripten 3.1.6's loader would fetch() a file path under Node 18+: read it here.
    const fs = await import('node:fs');
    const url = await import('node:url');
    wasmBinary = fs.readFileSync(url.fileURLToPath(wasmUrl));
  }
  const { default: factory } = await import(loaderUrl.href);
  const raw = await factory({
    wasmBinary: wasmBinary instanceof Uint8Array || wasmBinary == null ? wasmBinary : new Uint8Array(wasmBinary),
    locateFile: (path) => new URL(`${flavour}/${path}`, base).href,
  });
  return new TendonModule(raw, useSimd ? 'simd128' : 'scalar');
}

// ---- names ----
const camel = (s) => s.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());
const snake = (s) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const kFloatsOf = { TendonTransform: 10, TendonQuat: 4, TendonVec3: 3 };
const kPrimitive = {
  f32: ['HEAPF32', 4], f64: ['HEAPF64', 8], i8: ['HEAP8', 1], u8: ['HEAPU8', 1], i16: ['HEAP16', 2], u16: ['HEAPU16', 2],
  i32: ['HEAP32', 4], u32: ['HEAPU32', 4], i64: ['HEAP64', 8], u64: ['HEAPU64', 8], ptr: ['HEAPU32', 4], fn: ['HEAPU32', 4],
};
const kPointee = { 'int32_t': 'i32', 'uint32_t': 'u32', 'float': 'f32', 'double': 'f64', 'uint64_t': 'u64', 'int64_t': 'i64' };

// Temporary memory for one call: freed together.
class Arena {
  constructor(tendon) {
    this.t = tendon;
    this.blocks = [];
  }
  // fn(arena, raw), then the arena freed.
  run(fn) {
    try {
      return fn(this, this.t.raw);
    } finally {
      this.free();
    }
  }
  alloc(bytes) {
    const p = this.t.raw._malloc(Math.max(8, bytes));
    if (p === 0) throw new TendonError('malloc', 102, 'TENDON_ERROR_INTERNAL', `out of memory (${bytes} bytes)`, '', -1);
    this.t.raw.HEAPU8.fill(0, p, p + bytes);
    this.blocks.push(p);
    return p;
  }
  free() {
    for (const p of this.blocks) this.t.raw._free(p);
    this.blocks.length = 0;
  }
}

class TendonModule {
  constructor(raw, kernel) {
    this.raw = raw;
    this.kernel = kernel;
    this.layouts = layouts.structs;
    this.enums = layouts.enums;
    this._buffer = raw.HEAPU8.buffer;
    this._generation = 0;
  }
  get buffer() {
    this._checkGrowth();
    return this.raw.HEAPU8.buffer;
  }
  get memoryGeneration() {
    this._checkGrowth();
    return this._generation;
  }
  _checkGrowth() {
    if (this.raw.HEAPU8.buffer !== this._buffer) {
      this._buffer = this.raw.HEAPU8.buffer;
      ++this._generation;
    }
  }
  heapBytes() {
    return this.raw.HEAPU8.byteLength;
  }
  allocatedBytes() {
    return this.raw._tendon_wasm_allocated_bytes();
  }
  createWorld(settings = {}) {
    return new World(this, settings);
  }

  // ---- network snapshots (tendon/net_snapshot.h, docs/snapshots.md): pure codecs, no world ----
  // A pose is {tick, parts: 10 floats a part (part 0 the root), linear and angular: 3 floats
  // a part or null, asleep, hasVelocities}; settings are NetPoseSettings' fields (camelCase),
  // the C defaults for those not given.
  maxNetPoseBytes(partCount, settings = null) {
    return new Arena(this).run((a) => this.raw._tendon_max_net_pose_bytes(partCount | 0, this.struct('TendonNetPoseSettings', settings, a)));
  }
  // The message for `pose`, against `baseline` (the pose the receiver decoded at the tick it
  // acknowledged) or in full (null): a Uint8Array the caller keeps.
  encodeNetPose(pose, baseline = null, settings = null) {
    const call = 'tendon_encode_net_pose';
    [pose, baseline] = [this.steadyPose(pose), this.steadyPose(baseline)];
    return new Arena(this).run((a, r) => {
      const p = this.netPoseIn(call, 'pose', pose, a);
      const n = r.HEAP32[(p + this.netPoseField('part_count')) >> 2];
      const b = baseline == null ? 0 : this.netPoseIn(call, 'baseline', baseline, a);
      const s = this.struct('TendonNetPoseSettings', settings, a);
      // Bad settings give 0 here, and the encoder then names the field.
      const capacity = Math.max(64, r._tendon_max_net_pose_bytes(n, s));
      const out = a.alloc(capacity);
      const written = a.alloc(4);
      this.check(r._tendon_encode_net_pose(p, b, s, out, capacity, written), call);
      return r.HEAPU8.slice(out, out + r.HEAPU32[written >> 2]);
    });
  }
  // The pose a message carries (a delta needs its baseline: see netPoseBaselineTick).
  decodeNetPose(bytes, baseline = null, settings = null) {
    const call = 'tendon_decode_net_pose';
    baseline = this.steadyPose(baseline);
    return new Arena(this).run((a, r) => {
      const [m, size] = this.bytesIn(call, bytes, a);
      const count = a.alloc(4);
      this.check(r._tendon_net_pose_part_count(m, size, count), 'tendon_net_pose_part_count');
      const n = r.HEAP32[count >> 2];
      const b = baseline == null ? 0 : this.netPoseIn(call, 'baseline', baseline, a);
      const s = this.struct('TendonNetPoseSettings', settings, a);
      const out = this.netPoseOut(n, true, a);
      this.check(r._tendon_decode_net_pose(m, size, b, s, out), call);
      return this.netPoseRead(out, n, true);
    });
  }
  // The parts a message holds.
  netPosePartCount(bytes) {
    return this.messageInt32('tendon_net_pose_part_count', bytes);
  }
  // -1 for a full pose, else the low 16 bits of the tick of the baseline it needs.
  netPoseBaselineTick(bytes) {
    return this.messageInt32('tendon_net_pose_baseline_tick', bytes);
  }
  // A C call (bytes, size, int32_t* out) that reads one number from a message.
  messageInt32(call, bytes) {
    return new Arena(this).run((a, r) => {
      const [m, size] = this.bytesIn(call, bytes, a);
      const out = a.alloc(4);
      this.check(r[`_${call}`](m, size, out), call);
      return r.HEAP32[out >> 2];
    });
  }
  // A character's state change as its own message (at most 18 bytes).
  encodeNetCharacterState(state) {
    const call = 'tendon_encode_net_character_state';
    return new Arena(this).run((a, r) => {
      const p = this.struct('TendonNetCharacterState', state, a);
      const out = a.alloc(kMaxNetCharacterStateBytes);
      const written = a.alloc(4);
      this.check(r._tendon_encode_net_character_state(p, out, kMaxNetCharacterStateBytes, written), call);
      return r.HEAPU8.slice(out, out + r.HEAPU32[written >> 2]);
    });
  }
  decodeNetCharacterState(bytes) {
    const call = 'tendon_decode_net_character_state';
    return new Arena(this).run((a, r) => {
      const [m, size] = this.bytesIn(call, bytes, a);
      const out = a.alloc(this.layouts.TendonNetCharacterState.size);
      this.check(r._tendon_decode_net_character_state(m, size, out), call);
      return this.netCharacterStateRead(out);
    });
  }
  // A message's bytes copied into the arena: [pointer, size].
  bytesIn(call, bytes, a) {
    if (bytes instanceof ArrayBuffer) bytes = new Uint8Array(bytes);
    bytes = this.steady(bytes);
    if (!(bytes instanceof Uint8Array)) this.refuse(call, 'bytes', 'must be a Uint8Array (or an ArrayBuffer)');
    const p = a.alloc(bytes.length);
    this.raw.HEAPU8.set(bytes, p);
    return [p, bytes.length];
  }
  // A TendonNetPose in the arena over copies of the pose's arrays. The C struct has no
  // counts for its velocity arrays (they are part_count long), so short ones are refused here.
  netPoseIn(call, where, pose, a) {
    if (pose == null || typeof pose !== 'object') this.refuse(call, where, 'expected a pose {tick, parts, linear, angular, asleep}');
    const parts = pose.parts;
    const given = { linear: pose.linear, angular: pose.angular };
    if (!(parts instanceof Float32Array) && !Array.isArray(parts)) this.refuse(call, `${where}.parts`, 'expected 10 numbers a part (a Float32Array)');
    const n = Math.floor(parts.length / TRANSFORM_FLOATS);
    const r = this.raw;
    const pp = a.alloc(4 * TRANSFORM_FLOATS * n);
    r.HEAPF32.set(parts.length === TRANSFORM_FLOATS * n ? parts : parts.slice(0, TRANSFORM_FLOATS * n), pp >> 2);
    const velocities = [0, 0];
    ['linear', 'angular'].forEach((key, i) => {
      const v = given[key];
      if (v == null) return;
      if ((!(v instanceof Float32Array) && !Array.isArray(v)) || v.length < 3 * n) {
        this.refuse(call, `${where}.${key}`, `expected 3 numbers for each of the pose's ${n} parts, or null`);
      }
      velocities[i] = a.alloc(12 * n);
      r.HEAPF32.set(v.length === 3 * n ? v : v.slice(0, 3 * n), velocities[i] >> 2);
    });
    const p = a.alloc(this.layouts.TendonNetPose.size);
    this.writeStruct('TendonNetPose', p, {
      tick: pose.tick ?? 0, parts: pp, partCount: n, linear: velocities[0], angular: velocities[1],
      asleep: Boolean(pose.asleep), hasVelocities: Boolean(pose.hasVelocities ?? (velocities[0] !== 0)),
    }, a, where);
    return p;
  }
  netPoseField(name) {
    return this.layouts.TendonNetPose.fields.find((f) => f[0] === name)[1];
  }
  // A TendonNetPose in the arena with room for n parts (and their velocities).
  netPoseOut(n, velocities, a) {
    const p = a.alloc(this.layouts.TendonNetPose.size);
    this.writeStruct('TendonNetPose', p, {
      parts: a.alloc(4 * TRANSFORM_FLOATS * n), partCount: n,
      linear: velocities ? a.alloc(12 * n) : 0, angular: velocities ? a.alloc(12 * n) : 0,
    }, a, 'out');
    return p;
  }
  // Velocities are null unless the pose carries them (a message sent without them decodes
  // to zeros, which following would take for a body standing still at every sample).
  netPoseRead(p, n, velocities) {
    const s = this.readStruct('TendonNetPose', p);
    const copy = (at, floats) => (at === 0 ? null : new Float32Array(this.raw.HEAPU8.buffer, at, floats).slice());
    const carried = velocities && s.hasVelocities !== 0;
    return {
      tick: s.tick, parts: copy(s.parts, TRANSFORM_FLOATS * n),
      linear: carried ? copy(s.linear, 3 * n) : null, angular: carried ? copy(s.angular, 3 * n) : null,
      asleep: s.asleep !== 0, hasVelocities: s.hasVelocities !== 0,
    };
  }
  // A caller's array that is a view over this module's memory (an instance's outputParts)
  // is detached if an allocation grows the memory: copied before anything is allocated.
  steady(v) {
    return ArrayBuffer.isView(v) && v.buffer === this.raw.HEAPU8.buffer ? v.slice() : v;
  }
  steadyPose(pose) {
    if (pose == null || typeof pose !== 'object') return pose;
    return { ...pose, parts: this.steady(pose.parts), linear: this.steady(pose.linear), angular: this.steady(pose.angular) };
  }
  netCharacterStateRead(p) {
    const s = this.readStruct('TendonNetCharacterState', p);
    for (const k of ['active', 'anchored', 'limp']) s[k] = s[k] !== 0;
    s.impulse = vec3Of(s.impulse);
    return s;
  }

  // ---- errors ----
  resultName(code) {
    for (const [name, value] of Object.entries(this.enums.TendonResult)) if (value === code) return name;
    return `TENDON_RESULT_${code}`;
  }
  check(code, call) {
    if (code === 0) return;
    const r = this.raw;
    throw new TendonError(call, code, this.resultName(code), r.UTF8ToString(r._tendon_last_error()),
      r.UTF8ToString(r._tendon_last_error_field()), r._tendon_last_error_item());
  }
  // A refusal this layer makes before calling C (a JavaScript value that cannot be one).
  refuse(call, field, message, code = 8) {
    throw new TendonError(call, code, this.resultName(code), `${field}: ${message}`, field, -1);
  }

  // ---- structs ----
  enumValue(enumName, value, where) {
    if (typeof value === 'number') return value | 0;
    if (typeof value === 'string') {
      const suffix = `_${value.toUpperCase()}`;
      for (const [name, v] of Object.entries(this.enums[enumName])) if (name.endsWith(suffix)) return v;
    }
    return this.refuse('tendon.mjs', where,
      `'${value}' is not one of ${Object.keys(this.enums[enumName]).join(', ')} (or their numbers)`);
  }
  // Writes a JavaScript object into the struct at p: every field the object names (camelCase
  // or snake_case); the others keep what p holds (call the C defaults first).
  writeStruct(name, p, value, arena, where = name) {
    const layout = this.layouts[name];
    if (Array.isArray(value) || ArrayBuffer.isView(value)) {
      const keys = name === 'TendonTransform' ? null : ['x', 'y', 'z', 'w'];
      if (keys == null) return this.refuse('tendon.mjs', where, 'a transform is {translation, rotation, scale}');
      const object = {};
      for (let i = 0; i < value.length; ++i) object[keys[i]] = value[i];
      value = object;
    }
    if (value == null || typeof value !== 'object') return this.refuse('tendon.mjs', where, `expected an object for ${name}`);
    const counted = new Set();
    for (const [field, offset, kind] of layout.fields) {
      const key = camel(field);
      let v = value[key] !== undefined ? value[key] : value[field];
      if (v === undefined) continue;
      const at = p + offset;
      const fieldWhere = `${where}.${key}`;
      if (typeof kind === 'string') {
        this.writeScalar(kind, at, v, fieldWhere);
      } else if (kind.enum) {
        this.raw.HEAP32[at >> 2] = this.enumValue(kind.enum, v, fieldWhere);
      } else if (kind.struct) {
        this.writeStruct(kind.struct, at, v, arena, fieldWhere);
      } else if (kind.ptr) {
        const count = this.writePointer(kind.ptr, at, v, arena, fieldWhere);
        this.setCount(layout, p, field, count, value, counted);
      } else if (kind.array) {
        if (typeof v === 'string') v = new TextEncoder().encode(v);
        for (let i = 0; i < Math.min(kind.count, v.length); ++i) this.writeScalar(kind.array, at + i * kPrimitive[kind.array][1], v[i], fieldWhere);
      }
    }
    return p;
  }
  writeScalar(kind, at, v, where) {
    const r = this.raw;
    if (typeof v === 'boolean') v = v ? 1 : 0;
    if (kind === 'i64' || kind === 'u64') {
      r[kPrimitive[kind][0]][at >> 3] = BigInt(kind === 'u64' ? BigInt.asUintN(64, BigInt(v)) : BigInt(v));
      return;
    }
    if (typeof v === 'bigint') v = Number(v);
    if (typeof v !== 'number') return this.refuse('tendon.mjs', where, `expected a number, got ${typeof v}`);
    const [heap, size] = kPrimitive[kind];
    r[heap][at / size] = v;
  }
  // Writes a pointer field; returns the element count it points at (or null).
  writePointer(pointee, at, v, arena, where) {
    const r = this.raw;
    if (v === null || v === 0) {
      r.HEAPU32[at >> 2] = 0;
      return null;
    }
    if (typeof v === 'number') {  // a raw pointer the host made
      r.HEAPU32[at >> 2] = v;
      return null;
    }
    const type = pointee.replace(/^const /, '').trim();
    let p = 0;
    let count = null;
    if (type === 'char' && typeof v === 'string') {
      p = this.string(v, arena);
    } else if (type === 'char*' || type === 'char* const' || type === 'const char*') {
      const list = Array.from(v);
      p = arena.alloc(4 * list.length);
      list.forEach((s, i) => { r.HEAPU32[(p >> 2) + i] = this.string(String(s), arena); });
      count = list.length;
    } else if (this.layouts[type]) {
      const size = this.layouts[type].size;
      if (ArrayBuffer.isView(v) || (Array.isArray(v) && typeof v[0] === 'number')) {
        const floats = kFloatsOf[type];
        if (!floats) return this.refuse('tendon.mjs', where, `expected ${type} objects, not numbers`);
        p = arena.alloc(4 * v.length);
        r.HEAPF32.set(v, p >> 2);
        count = Math.floor(v.length / floats);
      } else {
        const list = Array.isArray(v) ? v : [v];
        p = arena.alloc(size * Math.max(1, list.length));
        const defaults = r[`_tendon_${snake(type.replace(/^Tendon/, '')).replace(/^_/, '')}_defaults`];
        list.forEach((item, i) => {
          if (defaults) defaults(p + i * size);
          this.writeStruct(type, p + i * size, item, arena, `${where}[${i}]`);
        });
        count = list.length;
      }
    } else if (kPointee[type]) {
      const kind = kPointee[type];
      const [heap, size] = kPrimitive[kind];
      const list = Array.from(v);
      p = arena.alloc(size * list.length);
      list.forEach((x, i) => this.writeScalar(kind, p + i * size, x, `${where}[${i}]`));
      count = list.length;
      void heap;
    } else {
      return this.refuse('tendon.mjs', where, `cannot pass a ${pointee}* from JavaScript (pass a raw pointer)`);
    }
    r.HEAPU32[at >> 2] = p;
    return count;
  }
  // The count field that goes with a pointer field (bones -> bone_count, ...), unless the
  // caller gave it.
  setCount(layout, p, field, count, value, counted) {
    if (count == null) return;
    const candidates = field === 'bone_names' ? ['bone_count'] : [`${field.replace(/s$/, '')}_count`];
    for (const c of candidates) {
      const f = layout.fields.find((x) => x[0] === c);
      if (!f || value[camel(c)] !== undefined || value[c] !== undefined || counted.has(c)) continue;
      this.raw.HEAP32[(p + f[1]) >> 2] = field === 'self_collision_pairs' ? count >> 1 : count;
      counted.add(c);
    }
  }
  // A struct out of memory as an object of camelCase fields. The plan (each field's key,
  // offset and kind) is made once per struct type and the fields are read through one
  // DataView: step() reads TendonFrameStats every frame, and converting its field names
  // on every read (then indexing ten kinds of typed array from one site, a megamorphic
  // load) cost about 100 us a read in Node, most of a small scene's frame (issue 39,
  // section 6; now about 6 us, most of it adding the 43 keys to a fresh object).
  readStruct(name, p) {
    const buffer = this.raw.HEAPU8.buffer;
    if (this._readView?.buffer !== buffer) this._readView = new DataView(buffer);
    return this.readPlanned(this.readPlan(name), p, this._readView);
  }
  readPlanned(plan, p, d) {
    const out = {};
    for (let i = 0; i < plan.length; i += 4) {
      const at = p + plan[i + 1];
      let v;
      switch (plan[i + 2]) {
        case 0: v = d.getFloat32(at, true); break;
        case 1: v = d.getFloat64(at, true); break;
        case 2: v = d.getInt8(at); break;
        case 3: v = d.getUint8(at); break;
        case 4: v = d.getInt16(at, true); break;
        case 5: v = d.getUint16(at, true); break;
        case 6: v = d.getInt32(at, true); break;
        case 7: v = d.getUint32(at, true); break;
        case 8: v = d.getBigInt64(at, true); break;
        case 9: v = d.getBigUint64(at, true); break;
        case 10: v = this.readPlanned(plan[i + 3], at, d); break;
        case 11: v = this.raw.UTF8ToString(at, plan[i + 3]); break;
        default: v = null;
      }
      out[plan[i]] = v;
    }
    return out;
  }
  // Flat: key, offset, kind code (readPlanned's switch), and the nested plan or byte count.
  readPlan(name) {
    this._readPlans ??= new Map();
    let plan = this._readPlans.get(name);
    if (plan) return plan;
    const codes = { f32: 0, f64: 1, i8: 2, u8: 3, i16: 4, u16: 5, i32: 6, u32: 7, i64: 8, u64: 9, ptr: 7, fn: 7 };
    plan = this.layouts[name].fields.flatMap(([field, offset, kind]) => {
      const key = camel(field);
      if (typeof kind === 'string') return [key, offset, codes[kind] ?? 12, null];
      if (kind.enum) return [key, offset, 6, null];
      if (kind.struct) return [key, offset, 10, this.readPlan(kind.struct)];
      if (kind.ptr) return [key, offset, 7, null];
      if (kind.array === 'u8') return [key, offset, 11, kind.count];
      return [key, offset, 12, null];
    });
    this._readPlans.set(name, plan);
    return plan;
  }
  string(s, arena) {
    const r = this.raw;
    const bytes = r.lengthBytesUTF8(s) + 1;
    const p = arena.alloc(bytes);
    r.stringToUTF8(s, p, bytes);
    return p;
  }
  // A struct argument in scratch memory: from the C defaults (when there are) plus `value`.
  struct(name, value, arena) {
    const p = arena.alloc(this.layouts[name].size);
    const defaults = this.raw[`_tendon_${snake(name.replace(/^Tendon/, '')).replace(/^_/, '')}_defaults`];
    if (defaults) defaults(p);
    if (name === 'TendonTransform' || name === 'TendonQuat') this.writeIdentity(name, p);
    if (value != null) this.writeStruct(name, p, value, arena);
    return p;
  }
  writeIdentity(name, p) {
    const f = this.raw.HEAPF32;
    if (name === 'TendonQuat') f[(p >> 2) + 3] = 1;
    else f.set([0, 0, 0, 0, 0, 0, 1, 1, 1, 1], p >> 2);
  }
  // A fresh view of `count` floats at p (valid until the memory grows).
  floats(p, count) {
    return new Float32Array(this.raw.HEAPU8.buffer, p, count);
  }
}

const vec3Of = (o) => ({ x: o.x, y: o.y, z: o.z });

// Typed-array views over memory an instance owns, re-made after the memory grows.
class Views {
  constructor(tendon) {
    this.t = tendon;
    this.cache = new Map();
  }
  get(key, p, count) {
    const cached = this.cache.get(key);
    if (cached && cached.buffer === this.t.raw.HEAPU8.buffer) return cached;
    const view = p === 0 || count === 0 ? new Float32Array(0) : this.t.floats(p, count);
    this.cache.set(key, view);
    return view;
  }
}

class World {
  constructor(tendon, settings) {
    this.tendon = tendon;
    this.owned = new Set();  // instances whose buffers this world frees on destroy
    const a = new Arena(tendon);
    try {
      const s = tendon.struct('TendonWorldSettings', null, a);
      const given = { ...settings };
      delete given.tasks;
      delete given.deviceProfile;
      tendon.writeStruct('TendonWorldSettings', s, given, a, 'settings');
      const out = a.alloc(4);
      tendon.check(tendon.raw._tendon_world_create(s, out), 'tendon_world_create');
      this.ptr = tendon.raw.HEAPU32[out >> 2];
      this.stats = tendon.raw._malloc(tendon.layouts.TendonFrameStats.size);
      this.scratch = tendon.raw._malloc(512);  // by-value struct arguments of the hot calls
    } finally {
      a.free();
    }
  }
  _live(call) {
    if (!this.ptr) this.tendon.refuse(call, 'world', 'the world was destroyed', 100);
    return this.ptr;
  }
  // Runs fn(arena) and frees the arena.
  _with(fn) {
    return new Arena(this.tendon).run(fn);
  }
  _call(name, ...args) {
    const code = this.tendon.raw[`_${name}`](this._live(name), ...args);
    this.tendon.check(code, name);
    return code;
  }
  // A Vec3 argument (by value in C: the wasm32 ABI passes a pointer to a copy).
  _vec(value, a) {
    return this.tendon.struct('TendonVec3', value ?? [0, 0, 0], a);
  }
  _transform(value, a) {
    return this.tendon.struct('TendonTransform', value ?? {}, a);
  }
  _id(call, fn, a) {
    const out = a.alloc(8);
    this.tendon.check(fn(out), call);
    return BigInt.asUintN(64, this.tendon.raw.HEAP64[out >> 3]);
  }

  settings() {
    return this._with((a, r) => {
      const p = a.alloc(this.tendon.layouts.TendonWorldSettings.size);
      r._tendon_world_get_settings(this._live('tendon_world_get_settings'), p);
      const s = this.tendon.readStruct('TendonWorldSettings', p);
      delete s.tasks;
      delete s.deviceProfile;
      s.isa = isaName(s.isa);
      s.renderInterpolation = Boolean(s.renderInterpolation);
      s.timePhases = Boolean(s.timePhases);
      return s;
    });
  }
  destroy() {
    if (!this.ptr) return;
    const r = this.tendon.raw;
    r._tendon_world_destroy(this.ptr);
    for (const instance of this.owned) instance._freeBuffers();
    this.owned.clear();
    r._free(this.stats);
    r._free(this.scratch);
    this.ptr = 0;
  }
  step(dt) {
    this.tendon.raw._tendon_world_step(this._live('tendon_world_step'), dt, this.stats);
    return this.tendon.readStruct('TendonFrameStats', this.stats);
  }
  lastStats() {
    this.tendon.raw._tendon_world_last_stats(this._live('tendon_world_last_stats'), this.stats);
    return this.tendon.readStruct('TendonFrameStats', this.stats);
  }
  stateHash() {
    return BigInt.asUintN(64, this.tendon.raw._tendon_world_state_hash(this._live('tendon_world_state_hash')));
  }
  // ---- saved states (tendon/snapshot.h, docs/snapshots.md) ----
  savedStateSize() {
    return this.tendon.raw._tendon_world_saved_state_size(this._live('tendon_world_saved_state_size'));
  }
  // The whole World's state, copied out of WebAssembly memory (a Uint8Array the caller keeps).
  saveState() {
    const call = 'tendon_world_save_state';
    const size = this.savedStateSize();
    return this._with((a, r) => {
      const p = a.alloc(size);
      const written = a.alloc(4);
      this.tendon.check(r._tendon_world_save_state(this._live(call), p, size, written), call);
      return r.HEAPU8.slice(p, p + r.HEAPU32[written >> 2]);
    });
  }
  // Restores what saveState gave (this World or one built and bound the same way); a refused
  // buffer throws TendonError and changes nothing.
  restoreState(bytes) {
    const call = 'tendon_world_restore_state';
    if (!(bytes instanceof Uint8Array)) this.tendon.refuse(call, 'bytes', 'must be a Uint8Array (from saveState)');
    this._with((a, r) => {
      const p = a.alloc(bytes.length);
      r.HEAPU8.set(bytes, p);
      this.tendon.check(r._tendon_world_restore_state(this._live(call), p, bytes.length), call);
    });
  }
  activeIsa() {
    return isaName(this.tendon.raw._tendon_world_active_isa(this._live('tendon_world_active_isa')));
  }
  setCamera(position) {
    this._with((a, r) => r._tendon_world_set_camera(this._live('tendon_world_set_camera'), this._vec(position, a)));
  }
  setMaxChains(maxChains) {
    this._call('tendon_world_set_max_chains', maxChains);
  }
  unbindAll() {
    const n = this.tendon.raw._tendon_world_unbind_all(this._live('tendon_world_unbind_all'));
    for (const instance of this.owned) instance._freeBuffers();
    this.owned.clear();
    return n;
  }

  // ---- static world ----
  buildStaticWorld(settings = {}) {
    this._with((a) => {
      const flat = (list, f, n) => list.flatMap((x) => toArray(f(x), n));
      const s = {};
      const planes = settings.planes ?? [];
      if (planes.length) Object.assign(s, { planeNormals: flat(planes, (x) => x.normal, 3), planeOffsets: planes.map((x) => x.offset), planeCount: planes.length });
      const spheres = settings.spheres ?? [];
      if (spheres.length) Object.assign(s, { sphereCentres: flat(spheres, (x) => x.centre, 3), sphereRadii: spheres.map((x) => x.radius), sphereCount: spheres.length });
      const capsules = settings.capsules ?? [];
      if (capsules.length) Object.assign(s, { capsuleEnds: capsules.flatMap((x) => [...toArray(x.a, 3), ...toArray(x.b, 3)]), capsuleRadii: capsules.map((x) => x.radius), capsuleCount: capsules.length });
      const boxes = settings.boxes ?? [];
      if (boxes.length) Object.assign(s, { boxPoses: boxes.map((x) => x.pose ?? {}), boxHalfExtents: flat(boxes, (x) => x.halfExtents, 3), boxCount: boxes.length });
      if (settings.heightfield) {
        const h = settings.heightfield;
        Object.assign(s, { heightfieldOrigin: h.origin, heightfieldSamplesX: h.samplesX, heightfieldSamplesZ: h.samplesZ, heightfieldSpacing: h.spacing, heightfieldHeights: h.heights });
      }
      if (settings.mesh) {
        Object.assign(s, { meshVertices: Array.from(settings.mesh.vertices), meshVertexCount: settings.mesh.vertices.length / 3, meshIndices: settings.mesh.indices, meshIndexCount: settings.mesh.indices.length });
      }
      const p = this.tendon.struct('TendonStaticWorldSettings', null, a);
      this.tendon.writeStruct('TendonStaticWorldSettings', p, s, a, 'settings');
      this._call('tendon_build_static_world', p);
    });
  }

  // ---- chains ----
  buildChainArchetype(settings) {
    return this._with((a, r) => {
      const p = this.tendon.struct('TendonChainArchetypeSettings', null, a);
      this.tendon.writeStruct('TendonChainArchetypeSettings', p, settings, a, 'settings');
      return this._id('tendon_build_chain_archetype', (out) => r._tendon_build_chain_archetype(this._live('tendon_build_chain_archetype'), p, out), a);
    });
  }
  removeChainArchetype(archetype) {
    this._call('tendon_remove_chain_archetype', archetype);
  }
  chainBoneCount(archetype) {
    return this.tendon.raw._tendon_chain_bone_count(this._live('tendon_chain_bone_count'), archetype);
  }
  bindChain(options) {
    const bones = this.chainBoneCount(options.archetype);
    if (bones === 0) this.tendon.refuse('tendon_bind_chain', 'binding.archetype', 'not a live chain archetype of this world', 10);
    const frames = options.colliderFrameCount ?? 0;
    const instance = new Instance(this, {
      rootParentWorld: 1, animatedLocal: bones, outputLocal: bones, outputWorld: options.outputWorld ? bones : 0,
      colliderFrames: frames,
    });
    instance.boneCount = bones;
    try {
      this._with((a, r) => {
        const b = this.tendon.struct('TendonChainBinding', null, a);
        const buf = instance.buffers;
        this.tendon.writeStruct('TendonChainBinding', b, {
          archetype: options.archetype, rootParentWorld: buf.rootParentWorld, animatedLocal: buf.animatedLocal,
          animatedCount: bones, outputLocal: buf.outputLocal, outputCount: bones,
          outputWorld: buf.outputWorld || 0, outputWorldCount: options.outputWorld ? bones : 0,
          colliderFrames: buf.colliderFrames || 0, colliderFrameCount: frames,
        }, a, 'binding');
        instance.id = this._id('tendon_bind_chain', (out) => r._tendon_bind_chain(this._live('tendon_bind_chain'), b, out), a);
      });
    } catch (e) {
      instance._freeBuffers();
      throw e;
    }
    instance.unbindCall = 'tendon_unbind_chain';
    instance.nodePositions = () => this._with((a, r) => {
      const p = a.alloc(12 * bones);
      this.tendon.check(r._tendon_get_chain_node_positions(this._live('World'), instance.id, p, bones), 'tendon_get_chain_node_positions');
      return Array.from({ length: bones }, (_, i) => this.tendon.readStruct('TendonVec3', p + 12 * i));
    });
    instance.isSimulated = () => this.tendon.raw._tendon_chain_is_simulated(this._live('World'), instance.id) !== 0;
    return instance;
  }

  // ---- ragdolls ----
  buildRagdollArchetype(settings) {
    return this._with((a, r) => {
      const p = this.tendon.struct('TendonRagdollSettings', null, a);
      this.tendon.writeStruct('TendonRagdollSettings', p, settings, a, 'settings');
      return this._id('tendon_build_ragdoll_archetype', (out) => r._tendon_build_ragdoll_archetype(this._live('World'), p, out), a);
    });
  }
  removeRagdollArchetype(archetype) {
    this._call('tendon_remove_ragdoll_archetype', archetype);
  }
  ragdollPartCount(archetype) {
    return this.tendon.raw._tendon_ragdoll_part_count(this._live('tendon_ragdoll_part_count'), archetype);
  }
  bindRagdoll(options) {
    const parts = this.ragdollPartCount(options.archetype);
    if (parts === 0) this.tendon.refuse('tendon_bind_ragdoll', 'binding.archetype', 'not a live ragdoll archetype of this world', 10);
    const instance = new Instance(this, { outputParts: parts, kinematicRoot: 1 });
    instance.partCount = parts;
    try {
      this._with((a, r) => {
        const b = this.tendon.struct('TendonRagdollBinding', null, a);
        const given = { ...options, outputParts: instance.buffers.outputParts, outputPartCount: parts };
        delete given.kinematicRoot;
        if (options.startParts) given.startPartCount = Math.floor(options.startParts.length / 10);
        this.tendon.writeStruct('TendonRagdollBinding', b, given, a, 'binding');
        instance.id = this._id('tendon_bind_ragdoll', (out) => r._tendon_bind_ragdoll(this._live('World'), b, out), a);
      });
    } catch (e) {
      instance._freeBuffers();
      throw e;
    }
    instance.unbindCall = 'tendon_unbind_ragdoll';
    instance.kinematicRoot.set([0, 0, 0, 0, 0, 0, 1, 1, 1, 1]);
    instance.setKinematicRoot = (on) => this._call('tendon_set_ragdoll_kinematic_root', instance.id, on ? instance.buffers.kinematicRoot : 0);
    return instance;
  }
  applyRagdollImpulse(ragdoll, part, impulse, worldPoint) {
    this._with((a) => this._call('tendon_apply_ragdoll_impulse', ragdoll, part, this._vec(impulse, a), this._vec(worldPoint, a)));
  }
  wakeRagdoll(ragdoll) {
    this._call('tendon_wake_ragdoll', ragdoll);
  }
  setRagdollEnabled(ragdoll, enabled) {
    this._call('tendon_set_ragdoll_enabled', ragdoll, enabled ? 1 : 0);
  }
  ragdollIsAsleep(ragdoll) {
    return this.tendon.raw._tendon_ragdoll_is_asleep(this._live('World'), ragdoll) !== 0;
  }
  ragdollIsValid(ragdoll) {
    return this.tendon.raw._tendon_ragdoll_is_valid(this._live('World'), ragdoll) !== 0;
  }
  setRagdollMotorTargets(ragdoll, rotations, strength) {
    this._with((a, r) => {
      const p = a.alloc(4 * rotations.length);
      r.HEAPF32.set(rotations, p >> 2);
      this._call('tendon_set_ragdoll_motor_targets', ragdoll, p, Math.floor(rotations.length / 4), strength, 0, 0);
    });
  }
  setRagdollAcceleration(ragdoll, acceleration) {
    this._with((a) => this._call('tendon_set_ragdoll_acceleration', ragdoll, this._vec(acceleration, a)));
  }
  setRagdollPartForce(ragdoll, part, force) {
    this._with((a) => this._call('tendon_set_ragdoll_part_force', ragdoll, part, this._vec(force, a)));
  }
  setRagdollPartVelocity(ragdoll, part, linear, angular) {
    this._with((a) => this._call('tendon_set_ragdoll_part_velocity', ragdoll, part, this._vec(linear, a), this._vec(angular, a)));
  }
  throwRagdoll(ragdoll, direction, strength, minSpeed, maxSpeed) {
    return this._with((a) => {
      const out = a.alloc(12);
      this._call('tendon_throw_ragdoll', ragdoll, this._vec(direction, a), strength, minSpeed, maxSpeed, out);
      return this.tendon.readStruct('TendonVec3', out);
    });
  }
  // Every part's world frame as the last step left it, 10 floats a part, for any ragdoll (a
  // character's too, whose buffers are Tendon's): a copy, so it survives memory growth.
  ragdollPartTransforms(ragdoll) {
    return this._with((a, r) => {
      const p = a.alloc(kMaxRagdollParts * TRANSFORM_FLOATS * 4);
      const count = a.alloc(4);
      this._call('tendon_get_ragdoll_part_transforms', ragdoll, p, kMaxRagdollParts, count);
      return new Float32Array(r.HEAPF32.buffer, p, TRANSFORM_FLOATS * r.HEAP32[count >> 2]).slice();
    });
  }
  raycastRagdolls(origin, direction, maxDistance) {
    return this._raycast('tendon_raycast_ragdolls', origin, direction, maxDistance);
  }
  raycastStatic(origin, direction, maxDistance) {
    return this._raycast('tendon_raycast_static', origin, direction, maxDistance);
  }
  _raycast(call, origin, direction, maxDistance) {
    return this._with((a, r) => {
      const hit = a.alloc(this.tendon.layouts.TendonRaycastHit.size);
      const got = r[`_${call}`](this._live(call), this._vec(origin, a), this._vec(direction, a), maxDistance, hit);
      if (!got) return null;
      const h = this.tendon.readStruct('TendonRaycastHit', hit);
      return { ...h, point: vec3Of(h.point), normal: vec3Of(h.normal) };
    });
  }

  // ---- part drives ----
  addPartDrive(ragdoll, settings) {
    return this._with((a, r) => {
      const p = this.tendon.struct('TendonPartDriveSettings', settings, a);
      return this._id('tendon_add_part_drive', (out) => r._tendon_add_part_drive(this._live('World'), ragdoll, p, out), a);
    });
  }
  setPartDriveTarget(drive, target) {
    const r = this.tendon.raw;
    const p = this.scratch;  // the per-frame call: no allocation
    const t = toArray(target, 3);
    r.HEAPF32[p >> 2] = t[0];
    r.HEAPF32[(p >> 2) + 1] = t[1];
    r.HEAPF32[(p >> 2) + 2] = t[2];
    this._call('tendon_set_part_drive_target', drive, p);
  }
  removePartDrive(drive) {
    this._call('tendon_remove_part_drive', drive);
  }
  partDriveState(drive) {
    return this._with((a) => {
      const p = a.alloc(this.tendon.layouts.TendonPartDriveState.size);
      this._call('tendon_get_part_drive_state', drive, p);
      const s = this.tendon.readStruct('TendonPartDriveState', p);
      return { ...s, active: s.active !== 0, broken: s.broken !== 0 };
    });
  }
  partDriveIsValid(drive) {
    return this.tendon.raw._tendon_part_drive_is_valid(this._live('World'), drive) !== 0;
  }

  // ---- following received poses, and the handover (tendon/follow.h, docs/snapshots.md) ----
  // settings: FollowSettings' fields (camelCase); the C defaults for those not given.
  followRagdoll(ragdoll, settings = {}) {
    this._with((a) => this._call('tendon_follow_ragdoll', ragdoll, this.tendon.struct('TendonFollowSettings', settings, a)));
  }
  // One sample at the sender's time (s): parts 10 floats a part (the ragdoll's part count),
  // linear and angular 3 floats a part (centre-of-mass and angular velocities) or both null.
  pushFollowSample(ragdoll, time, parts, linear = null, angular = null) {
    const call = 'tendon_push_follow_sample';
    this._with((a, r) => {
      const [partsIn, linearIn, angularIn] = [parts, linear, angular].map((v) => this.tendon.steady(v));
      const array = (v, floats, field) => {
        if (v == null) return [0, 0];
        if (!(v instanceof Float32Array) && !Array.isArray(v)) this.tendon.refuse(call, field, `expected ${floats} numbers a part (a Float32Array)`);
        const n = Math.floor(v.length / floats);
        const p = a.alloc(4 * floats * n);
        r.HEAPF32.set(v.length === floats * n ? v : v.slice(0, floats * n), p >> 2);
        return [p, n];
      };
      const [pp, n] = array(partsIn, TRANSFORM_FLOATS, 'parts');
      const [lp, ln] = array(linearIn, 3, 'linear');
      const [ap, an] = array(angularIn, 3, 'angular');
      if (ln !== an) this.tendon.refuse(call, 'angular', `linear gives ${ln} parts and angular ${an}: both or neither, one a part`);
      this._call(call, ragdoll, time, pp, n, lp, ap, ln);
    });
  }
  // Hands the ragdoll to this world: it simulates on from the state it shows.
  stopFollowing(ragdoll) {
    this._call('tendon_stop_following', ragdoll);
  }
  isFollowing(ragdoll) {
    return this.tendon.raw._tendon_is_following(this._live('tendon_is_following'), ragdoll) !== 0;
  }
  // The follow clock reads `now` (s) at the world's current simulated time and advances with it.
  setFollowClock(now) {
    this._call('tendon_set_follow_clock', now);
  }
  followClock() {
    return this.tendon.raw._tendon_follow_clock(this._live('tendon_follow_clock'));
  }
  // The ragdoll's pose for a network message at `tick` (the host's network tick): its part
  // frames and velocities (unless velocities is false) at the world's time, the last
  // substep's (a substep ahead of the render-interpolated output), and its asleep flag.
  captureRagdollPose(ragdoll, tick = 0, velocities = true) {
    const call = 'tendon_capture_ragdoll_pose';
    return this._with((a) => {
      const n = this._ragdollPartCountOf(ragdoll, a);
      const p = this.tendon.netPoseOut(n, velocities, a);
      this.tendon.writeStruct('TendonNetPose', p, { tick: tick >>> 0 }, a, 'tick');
      this._call(call, ragdoll, p);
      return this.tendon.netPoseRead(p, n, velocities);
    });
  }
  // A bound ragdoll's part count (a character's too: the C ABI maps ids to archetypes only
  // through the part frames), refusing a stale ragdoll with Tendon's message.
  _ragdollPartCountOf(ragdoll, a) {
    const p = a.alloc(kMaxRagdollParts * TRANSFORM_FLOATS * 4);
    const count = a.alloc(4);
    this._call('tendon_get_ragdoll_part_transforms', ragdoll, p, kMaxRagdollParts, count);
    return this.tendon.raw.HEAP32[count >> 2];
  }
  // The character's state for a network message (activation count, active, anchored, limp,
  // strength, and an impulse of zero: the sender adds one it applies).
  captureNetCharacterState(character) {
    return this._with((a) => {
      const p = a.alloc(this.tendon.layouts.TendonNetCharacterState.size);
      this._call('tendon_capture_net_character_state', character, p);
      return this.tendon.netCharacterStateRead(p);
    });
  }
  // Makes the character do what a received state says; false for a stale message (an older
  // activation), which changes nothing.
  applyNetCharacterState(character, state) {
    return this._with((a, r) => {
      const applied = a.alloc(4);
      this._call('tendon_apply_net_character_state', character, this.tendon.struct('TendonNetCharacterState', state, a), applied);
      return r.HEAP32[applied >> 2] !== 0;
    });
  }

  // ---- host bodies ----
  addHostBody(settings) {
    return this._with((a, r) => {
      const p = this.tendon.struct('TendonHostBodySettings', settings, a);
      return this._id('tendon_add_host_body', (out) => r._tendon_add_host_body(this._live('World'), p, out), a);
    });
  }
  removeHostBody(body) {
    this._call('tendon_remove_host_body', body);
  }
  hostBodyIsValid(body) {
    return this.tendon.raw._tendon_host_body_is_valid(this._live('World'), body) !== 0;
  }
  setHostBodyMotion(body, transform, linearVelocity, angularVelocity) {
    this._with((a) => this._call('tendon_set_host_body_motion', body, this._transform(transform, a),
      this._vec(linearVelocity, a), this._vec(angularVelocity, a)));
  }
  moveHostBodyTo(body, target) {
    this._with((a) => this._call('tendon_move_host_body_to', body, this._transform(target, a)));
  }
  hostBodyState(body) {
    return this._with((a) => {
      const p = a.alloc(this.tendon.layouts.TendonHostBodyState.size);
      this._call('tendon_get_host_body_state', body, p);
      return this.tendon.readStruct('TendonHostBodyState', p);
    });
  }
  hostBodyCount() {
    return this.tendon.raw._tendon_host_body_count(this._live('World'));
  }

  // ---- characters ----
  buildCharacterArchetype(settings) {
    return this._with((a, r) => {
      const p = this.tendon.struct('TendonCharacterSettings', null, a);
      this.tendon.writeStruct('TendonCharacterSettings', p, settings, a, 'settings');
      return this._id('tendon_build_character_archetype', (out) => r._tendon_build_character_archetype(this._live('World'), p, out), a);
    });
  }
  removeCharacterArchetype(archetype) {
    this._call('tendon_remove_character_archetype', archetype);
  }
  characterPartCount(archetype) {
    return this.tendon.raw._tendon_character_part_count(this._live('World'), archetype);
  }
  findCharacterPart(archetype, name) {
    return this._with((a, r) => r._tendon_find_character_part(this._live('World'), archetype, this.tendon.string(name, a)));
  }
  characterPartInfo(archetype, part) {
    return this._with((a) => {
      const p = a.alloc(this.tendon.layouts.TendonCharacterPartInfo.size);
      this._call('tendon_get_character_part_info', archetype, part, p);
      return this.tendon.readStruct('TendonCharacterPartInfo', p);
    });
  }
  bindCharacter(options) {
    const bones = options.boneCount;
    const instance = new Instance(this, { modelWorld: 1, animatedLocal: bones, outputLocal: bones, outputWorld: options.outputWorld ? bones : 0 });
    instance.boneCount = bones;
    instance.modelWorld.set([0, 0, 0, 0, 0, 0, 1, 1, 1, 1]);
    try {
      this._with((a, r) => {
        const b = this.tendon.struct('TendonCharacterBinding', null, a);
        const buf = instance.buffers;
        const given = { ...options, modelWorld: buf.modelWorld, animatedLocal: buf.animatedLocal, outputLocal: buf.outputLocal, outputWorld: buf.outputWorld || 0 };
        this.tendon.writeStruct('TendonCharacterBinding', b, given, a, 'binding');
        instance.id = this._id('tendon_bind_character', (out) => r._tendon_bind_character(this._live('World'), b, out), a);
      });
    } catch (e) {
      instance._freeBuffers();
      throw e;
    }
    instance.unbindCall = 'tendon_unbind_character';
    return instance;
  }
  activateCharacter(character, options) {
    this._with((a) => this._call('tendon_activate_character', character, this.tendon.struct('TendonActivateOptions', options, a)));
  }
  deactivateCharacter(character, blendSeconds = 0.3, space = 'auto') {
    this._call('tendon_deactivate_character', character, blendSeconds, this.tendon.enumValue('TendonHandBackSpace', space, 'space'));
  }
  hitCharacter(character, part, impulse, worldPoint, options) {
    this._with((a) => this._call('tendon_hit_character', character, part, this._vec(impulse, a), this._vec(worldPoint, a),
      this.tendon.struct('TendonHitOptions', options, a)));
  }
  goLimp(character, seconds) {
    this._call('tendon_character_go_limp', character, seconds);
  }
  setCharacterStrength(character, strength) {
    this._call('tendon_set_character_strength', character, strength);
  }
  setCharacterAnchored(character, anchored) {
    this._call('tendon_set_character_anchored', character, anchored ? 1 : 0);
  }
  applyCharacterImpulse(character, impulse) {
    this._with((a) => this._call('tendon_apply_character_impulse', character, this._vec(impulse, a)));
  }
  applyCharacterPartImpulse(character, part, impulse, worldPoint) {
    this._with((a) => this._call('tendon_apply_character_part_impulse', character, part, this._vec(impulse, a), this._vec(worldPoint, a)));
  }
  characterState(character) {
    return this._with((a) => {
      const p = a.alloc(this.tendon.layouts.TendonCharacterState.size);
      this._call('tendon_get_character_state', character, p);
      const s = this.tendon.readStruct('TendonCharacterState', p);
      for (const k of ['active', 'blendingOut', 'settled', 'anchored']) s[k] = s[k] !== 0;
      return s;
    });
  }
  // Where a character's model should stand to get up from the ragdoll as it lies
  // (tendon_get_character_recovery_root): {translation, rotation, scale}.
  characterRecoveryRoot(character, legRoom = 0) {
    return this._with((a) => {
      const p = a.alloc(this.tendon.layouts.TendonTransform.size);
      this._call('tendon_get_character_recovery_root', character, legRoom, p);
      return this.tendon.readStruct('TendonTransform', p);
    });
  }
  characterRagdoll(character) {
    return BigInt.asUintN(64, this.tendon.raw._tendon_character_ragdoll(this._live('World'), character));
  }
  characterOfRagdoll(ragdoll) {
    return BigInt.asUintN(64, this.tendon.raw._tendon_character_of_ragdoll(this._live('World'), ragdoll));
  }
  characterIsValid(character) {
    return this.tendon.raw._tendon_character_is_valid(this._live('World'), character) !== 0;
  }
  drainCharacterEvents() {
    return this._drain('TendonCharacterEvent', '_tendon_drain_character_events', (e) => ({
      ...e, type: e.type === 0 ? 'started' : 'ended',
    }));
  }
  drainContactEvents() {
    const kinds = ['began', 'ended', 'drive_broken'];  // TendonContactEventKind
    const sides = ['static', 'ragdoll', 'host_body', 'part_drive'];  // TendonContactSide
    return this._drain('TendonContactEvent', '_tendon_world_drain_contact_events', (e) => ({
      ...e, kind: kinds[e.kind], bKind: sides[e.bKind], point: vec3Of(e.point), normal: vec3Of(e.normal),
    }));
  }
  _drain(struct, fn, shape) {
    const size = this.tendon.layouts[struct].size;
    const batch = 64;
    const events = [];
    this._with((a, r) => {
      const p = a.alloc(size * batch);
      for (;;) {
        const n = r[fn](this._live(fn), p, batch);
        for (let i = 0; i < n; ++i) events.push(shape(this.tendon.readStruct(struct, p + i * size)));
        if (n < batch) break;
      }
    });
    return events;
  }

  // ---- VRM ----
  loadVrmKind(bytes, options = {}) {
    const view = bytes instanceof ArrayBuffer ? new Uint8Array(bytes)
      : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const id = this._with((a, r) => {
      const data = a.alloc(view.byteLength);
      r.HEAPU8.set(view, data);
      const o = this.tendon.struct('TendonVrmOptions', { ...options, name: undefined }, a);
      const name = this.tendon.string(options.name ?? 'avatar.vrm', a);
      return this._id('tendon_load_vrm_kind_from_memory',
        (out) => r._tendon_load_vrm_kind_from_memory(this._live('World'), data, view.byteLength, name, o, out), a);
    });
    return this._vrmKind(id);
  }
  _vrmKind(id) {
    const t = this.tendon;
    const r = t.raw;
    const w = this._live('World');
    return this._with((a) => {
      const s = a.alloc(t.layouts.TendonVrmSkeleton.size);
      t.check(r._tendon_vrm_kind_skeleton(w, id, s), 'tendon_vrm_kind_skeleton');
      const sk = t.readStruct('TendonVrmSkeleton', s);
      const n = sk.boneCount;
      const names = Array.from({ length: n }, (_, i) => r.UTF8ToString(r.HEAPU32[(sk.names >> 2) + i]));
      const parents = new Int32Array(r.HEAP32.buffer, sk.parents, n).slice();
      const restLocal = new Float32Array(r.HEAPF32.buffer, sk.restLocal, n * 10).slice();
      const skins = [];
      const skinCount = r._tendon_vrm_kind_skin_count(w, id);
      const sp = a.alloc(t.layouts.TendonVrmSkin.size);
      for (let i = 0; i < skinCount; ++i) {
        t.check(r._tendon_vrm_kind_skin(w, id, i, sp), 'tendon_vrm_kind_skin');
        const k = t.readStruct('TendonVrmSkin', sp);
        skins.push({
          joints: new Int32Array(r.HEAP32.buffer, k.joints, k.jointCount).slice(),
          inverseBinds: new Float32Array(r.HEAPF32.buffer, k.inverseBinds, 16 * k.jointCount).slice(),
        });
      }
      const world = this;
      return {
        id, boneCount: n, jointCount: r._tendon_vrm_kind_joint_count(w, id), skeleton: { names, parents, restLocal }, skins,
        characterArchetype: BigInt.asUintN(64, r._tendon_vrm_kind_character_archetype(w, id)),
        unload() {
          world._call('tendon_unload_vrm_kind', id);
        },
      };
    });
  }
  bindVrmAvatar(kind, modelWorld) {
    const kindId = typeof kind === 'bigint' ? kind : kind.id;
    const t = this.tendon;
    const r = t.raw;
    const id = this._with((a) => this._id('tendon_bind_vrm_avatar',
      (out) => r._tendon_bind_vrm_avatar(this._live('World'), kindId, this._transform(modelWorld, a), out), a));
    const world = this;
    const b = this._with((a) => {
      const p = a.alloc(t.layouts.TendonVrmAvatarBuffers.size);
      this._call('tendon_vrm_avatar_buffers', id, p);
      return t.readStruct('TendonVrmAvatarBuffers', p);
    });
    const views = new Views(t);
    const n = b.boneCount;
    return {
      id, boneCount: n, character: BigInt.asUintN(64, b.character),
      get modelWorld() { return views.get('modelWorld', b.modelWorld, 10); },
      get animatedLocal() { return views.get('animatedLocal', b.animatedLocal, 10 * n); },
      get outputLocal() { return views.get('outputLocal', b.outputLocal, 10 * n); },
      get outputWorld() { return views.get('outputWorld', b.outputWorld, 10 * n); },
      // Called every frame per avatar without a character: the export named directly, not
      // through _call's name-built lookup and argument array (0.5 us a call in Node).
      updateWorld() {
        const name = 'tendon_vrm_avatar_update_world';
        t.check(r._tendon_vrm_avatar_update_world(world._live(name), id), name);
      },
      unbind() { world._call('tendon_unbind_vrm_avatar', id); },
    };
  }

  // ---- debug draw ----
  drawDebug(flags = DEBUG_DRAW.ALL) {
    const r = this.tendon.raw;
    return this._with((a) => {
      const countPtr = a.alloc(4);
      this._call('tendon_wasm_debug_lines', flags >>> 0, 0, 0, countPtr);
      const n = r.HEAP32[countPtr >> 2];
      const p = a.alloc(Math.max(1, n) * 14 * 4);
      this._call('tendon_wasm_debug_lines', flags >>> 0, p, n, countPtr);
      return { segmentCount: n, data: new Float32Array(r.HEAPF32.buffer, p, n * 14).slice() };
    });
  }
}

// Buffers one bound instance owns in WebAssembly memory (poses), with views over them.
class Instance {
  constructor(world, sizes) {
    this.world = world;
    this.buffers = {};
    this.sizes = sizes;
    this.views = new Views(world.tendon);
    const r = world.tendon.raw;
    for (const [key, transforms] of Object.entries(sizes)) {
      if (transforms === 0) {
        this.buffers[key] = 0;
        continue;
      }
      const p = r._malloc(40 * transforms);
      r.HEAPF32.fill(0, p >> 2, (p >> 2) + 10 * transforms);
      for (let i = 0; i < transforms; ++i) r.HEAPF32.set([0, 0, 0, 0, 0, 0, 1, 1, 1, 1], (p >> 2) + 10 * i);
      this.buffers[key] = p;
      Object.defineProperty(this, key, { get: () => this.views.get(key, this.buffers[key], 10 * transforms), enumerable: true });
    }
    for (const [key, transforms] of Object.entries(sizes)) {
      if (transforms === 0) Object.defineProperty(this, key, { get: () => new Float32Array(0), enumerable: true });
    }
    world.owned.add(this);
  }
  unbind() {
    if (this.id === undefined) return;
    this.world._call(this.unbindCall, this.id);
    this._freeBuffers();
    this.world.owned.delete(this);
  }
  _freeBuffers() {
    const r = this.world.tendon.raw;
    for (const key of Object.keys(this.buffers)) {
      if (this.buffers[key]) r._free(this.buffers[key]);
      this.buffers[key] = 0;
    }
    this.id = undefined;
  }
}

function toArray(v, n) {
  if (v == null) return new Array(n).fill(0);
  if (Array.isArray(v) || ArrayBuffer.isView(v)) return Array.from(v).slice(0, n);
  return n === 4 ? [v.x, v.y, v.z, v.w] : [v.x, v.y, v.z];
}

const kIsaNames = ['auto', 'scalar', 'scalar_fma', 'sse2', 'sse42', 'avx2_fma', 'neon', 'avx512'];
function isaName(value) {
  return kIsaNames[value] ?? String(value);
}
