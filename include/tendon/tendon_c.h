/* tendon/tendon_c.h: Tendon's C ABI, for any engine's FFI (C, C# P/Invoke, Rust, LuaJIT,
 * Python ctypes, Godot GDExtension).
 *
 * What it does: the World's whole API as plain C11: worlds from a settings struct (with a
 * defaults function), every archetype kind built from plain arrays and structs (chains,
 * ragdolls, characters, the static world), bind / rebind / unbind of chains, pendulums,
 * ragdolls and characters over host buffers, Step and its stats, the Chrome trace, the
 * character calls and events, raycasts, the host callbacks (wind sampler, simulate
 * predicate), the asset loaders (glTF / VRM files and clips, the Jolt ragdoll and its
 * animations) and the glTF / VRM avatar importer (by path or from memory). Every World
 * call has a counterpart or a documented reason not to (docs/c-abi.md; the CTest
 * CAbi.EveryWorldCallHasACCounterpart keeps it so), and every struct a host fills has a
 * defaults function. Every id is a plain 64-bit integer (index | generation << 32, 0 is null),
 * generation-checked by the World as in C++. Every call that can fail returns a
 * TendonResult; the message (which item, which field, why) is then available from
 * tendon_last_error() on the calling thread and tendon_world_last_error() on the world.
 * What it does NOT do: expose a C++ type, or let an exception out (an allocation failure
 * inside a call returns TENDON_ERROR_INTERNAL). It does not copy host buffers: what a
 * binding names must stay valid until the instance is unbound, as in C++.
 * Threading: as the C++ World (one thread at a time per world; Step uses the task hooks).
 * tendon_last_error() is per thread. Memory: building and binding allocate; step does not.
 * Layout: TendonVec3, TendonQuat and TendonTransform are bit-compatible with tendon::Vec3,
 * tendon::Quat and tendon::Transform (12, 16 and 40 bytes, floats, quaternions x y z w). */
#ifndef TENDON_TENDON_C_H_
#define TENDON_TENDON_C_H_

#include <stddef.h>
#include <stdint.h>

#include "tendon/profiler_hooks.h"
#include "tendon/task_hooks.h"

#if defined(_WIN32)
#if defined(TENDON_C_BUILDING)
#define TENDON_C_API __declspec(dllexport)
#else
#define TENDON_C_API __declspec(dllimport)
#endif
#elif defined(__GNUC__) || defined(__clang__)
#define TENDON_C_API __attribute__((visibility("default")))
#else
#define TENDON_C_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- values ---- */
typedef struct TendonVec3 { float x, y, z; } TendonVec3;
typedef struct TendonQuat { float x, y, z, w; } TendonQuat;
typedef struct TendonTransform {
  TendonVec3 translation;
  TendonQuat rotation; /* unit, x y z w */
  TendonVec3 scale;
} TendonTransform;
/* The identity: translation 0, rotation (0, 0, 0, 1), scale 1. */
TENDON_C_API TendonTransform tendon_transform_identity(void);

/* ---- ids: index | generation << 32; 0 is null ---- */
typedef uint64_t TendonChainArchetypeId;
typedef uint64_t TendonChainId;
typedef uint64_t TendonPendulumId;
typedef uint64_t TendonRagdollArchetypeId;
typedef uint64_t TendonRagdollId;
typedef uint64_t TendonPartDriveId; /* a drive of a ragdoll part toward a target */
typedef uint64_t TendonCharacterArchetypeId;
typedef uint64_t TendonCharacterId;
typedef uint64_t TendonVrmKindId;   /* an imported avatar kind (per world) */
typedef uint64_t TendonVrmAvatarId; /* a bound avatar (per world) */
typedef uint64_t TendonHostBodyId;  /* a kinematic body the host moves (tendon/host_body.h) */

/* ---- results: tendon::ErrorCode's values, then the C layer's own ---- */
typedef enum TendonResult {
  TENDON_OK = 0,
  TENDON_ERROR_EMPTY = 1,
  TENDON_ERROR_PARENT_OUT_OF_RANGE = 2,
  TENDON_ERROR_PARENT_NOT_BEFORE = 3,
  TENDON_ERROR_CYCLE = 4,
  TENDON_ERROR_ZERO_LENGTH_SEGMENT = 5,
  TENDON_ERROR_NOT_FINITE = 6,
  TENDON_ERROR_NOT_UNIT_ROTATION = 7,
  TENDON_ERROR_OUT_OF_RANGE = 8,
  TENDON_ERROR_BAD_REFERENCE = 9,
  TENDON_ERROR_STALE_HANDLE = 10,
  TENDON_ERROR_NULL_BUFFER = 11,
  TENDON_ERROR_CAPACITY = 12,
  TENDON_ERROR_DISCONNECTED = 13,
  TENDON_ERROR_INACTIVE = 14,
  TENDON_ERROR_REENTRANT = 15,
  TENDON_ERROR_IN_USE = 16,
  TENDON_ERROR_NULL_ARGUMENT = 100, /* a required pointer argument was NULL */
  TENDON_ERROR_IO = 101,            /* a file could not be read or written (C++ ErrorCode::kIo) */
  TENDON_ERROR_INTERNAL = 102       /* out of memory, or a bug: the call changed nothing */
} TendonResult;

/* The last failed call's message on this thread ("" when none): valid until the next
 * failing call on this thread. field is as a host would write it ("bones[3].parent"),
 * item the offending index or -1. */
TENDON_C_API const char* tendon_last_error(void);
TENDON_C_API const char* tendon_last_error_field(void);
TENDON_C_API int32_t tendon_last_error_item(void);
TENDON_C_API const char* tendon_result_name(TendonResult result);

/* ---- the world ---- */
typedef struct TendonWorld TendonWorld;

typedef enum TendonIsa {
  TENDON_ISA_AUTO = 0,
  TENDON_ISA_SCALAR = 1,
  TENDON_ISA_SCALAR_FMA = 2,
  TENDON_ISA_SSE2 = 3,
  TENDON_ISA_SSE42 = 4,
  TENDON_ISA_AVX2_FMA = 5,
  TENDON_ISA_NEON = 6,
  TENDON_ISA_AVX512 = 7 /* AVX-512F ragdolls in 16-lane blocks, AVX2+FMA chains */
} TendonIsa;

/* A device profile (tendon/device_profile.h): opaque; made by tendon_device_profile_calibrate
   or _load, freed by tendon_device_profile_destroy. */
typedef struct TendonDeviceProfile TendonDeviceProfile;

/* Bits of TendonWorldSettings::from_device_profile (tendon::ProfiledSetting). */
enum {
  TENDON_PROFILED_MAX_CHAINS = 1u << 0,
  TENDON_PROFILED_MAX_DISTANCE = 1u << 1,
  TENDON_PROFILED_MAX_ACTIVE_CHARACTERS = 1u << 2,
  TENDON_PROFILED_RAGDOLL_SUBSTEPS = 1u << 3,
  TENDON_PROFILED_FIXED_HZ = 1u << 4,
  TENDON_PROFILED_ISA = 1u << 5
};

/* tendon::WorldSettings, field for field (units and ranges in tendon/world.h). */
typedef struct TendonWorldSettings {
  TendonVec3 gravity;
  float fixed_hz;
  int32_t max_substeps;
  int32_t render_interpolation; /* bool */
  int32_t time_phases;          /* bool: FrameStats times (see tendon::WorldSettings) */
  float max_distance;
  int32_t max_chains;
  float pendulum_max_distance;
  float teleport_distance;
  float teleport_angle_degrees;
  TendonVec3 ambient_wind;
  uint64_t wind_seed;
  int32_t ragdoll_substeps;
  int32_t ragdoll_iterations;
  float ragdoll_sleep_speed;
  float ragdoll_contact_angular_damping;
  float ragdoll_max_push_speed;
  float ragdoll_sleep_seconds;
  float ragdoll_settle_damping;
  int32_t max_active_characters;
  float frame_budget_ms;               /* 0: no millisecond budget (see tendon::WorldSettings) */
  int32_t budget_min_ragdoll_substeps; /* the budget's floor, [1, ragdoll_substeps] */
  /* NULL, or a profile whose budgets fill every profiled setting left at its default
     (read at create; the world keeps no pointer to it). */
  const TendonDeviceProfile* device_profile;
  uint32_t from_device_profile; /* TENDON_PROFILED_* bits, from tendon_world_get_settings */
  TendonIsa isa;
  TendonTaskHooks tasks; /* enqueue NULL: every phase on the calling thread */
  int32_t contact_event_capacity; /* events one step queues, [0, 1048576]; 0: contact events off */
} TendonWorldSettings;

/* tendon::WorldSettings' defaults. */
TENDON_C_API void tendon_world_settings_defaults(TendonWorldSettings* settings);
/* The settings the world runs with (a device profile applied; device_profile NULL). */
TENDON_C_API void tendon_world_get_settings(const TendonWorld* world, TendonWorldSettings* out);

/* ---- device profiles (tendon/device_profile.h, ports/device/device_profile_json.h) ---- */
typedef enum TendonDeviceTier {
  TENDON_TIER_LOW = 0,
  TENDON_TIER_MID = 1,
  TENDON_TIER_HIGH = 2,
  TENDON_TIER_ULTRA = 3
} TendonDeviceTier;
typedef struct TendonDeviceBudgets {
  TendonDeviceTier tier;
  TendonIsa best_isa;
  int32_t useful_workers;
  double compute, chain_compute, rigid_compute; /* against the reference machine, [0.25, 4] */
  int32_t max_chains;
  float max_distance;
  int32_t max_active_characters, ragdoll_substeps;
  float fixed_hz;
} TendonDeviceBudgets;
/* Calibrates this device on the calling thread (every instruction set it has) within
   max_seconds, (0, 60]. tendon-devicebench measures several worker counts. */
TENDON_C_API TendonResult tendon_device_profile_calibrate(double max_seconds, TendonDeviceProfile** out);
/* Reads a profile file; a bad or foreign one is refused naming the file, JSON path and why. */
TENDON_C_API TendonResult tendon_device_profile_load(const char* path, TendonDeviceProfile** out);
TENDON_C_API TendonResult tendon_device_profile_save(const TendonDeviceProfile* profile, const char* path);
TENDON_C_API TendonResult tendon_device_profile_budgets(const TendonDeviceProfile* profile, TendonDeviceBudgets* out);
/* NULL is a no-op. */
TENDON_C_API void tendon_device_profile_destroy(TendonDeviceProfile* profile);
TENDON_C_API TendonResult tendon_world_create(const TendonWorldSettings* settings, TendonWorld** out);
/* Unbinds nothing into host buffers (as ~World); NULL is a no-op. */
TENDON_C_API void tendon_world_destroy(TendonWorld* world);
/* The world's last failed call's message ("" when none). */
TENDON_C_API const char* tendon_world_last_error(const TendonWorld* world);
TENDON_C_API TendonIsa tendon_world_active_isa(const TendonWorld* world);
TENDON_C_API int32_t tendon_world_lane_width(const TendonWorld* world);
/* Ragdoll lanes per block (World::RagdollLaneWidth): 16 on TENDON_ISA_AVX512, else 8. */
TENDON_C_API int32_t tendon_world_ragdoll_lane_width(const TendonWorld* world);
TENDON_C_API uint64_t tendon_world_state_hash(const TendonWorld* world);
/* 1 between tendon_world_begin_step and tendon_world_finish_step (World::FrameInFlight). */
TENDON_C_API int32_t tendon_world_frame_in_flight(const TendonWorld* world);

/* ---- step and stats ---- */
typedef struct TendonPhaseTimes {
  double gather_ms, budget_ms, pose_ms, solve_ms, writeback_ms, pendulum_ms, ragdoll_ms, total_ms;
} TendonPhaseTimes;

/* tendon::BudgetAction: what the millisecond budget decided after a frame. */
typedef enum TendonBudgetAction {
  TENDON_BUDGET_OFF = 0,
  TENDON_BUDGET_HELD = 1,
  TENDON_BUDGET_CUT = 2,
  TENDON_BUDGET_RESTORED = 3,
  TENDON_BUDGET_AT_FLOOR = 4
} TendonBudgetAction;

/* tendon::FrameStats, field for field (bools as int32_t). */
typedef struct TendonFrameStats {
  uint64_t frame;
  int32_t substeps;
  float dropped_seconds;
  int32_t dt_rejected;
  float interpolation_alpha;
  int32_t bound_chains, bound_pendulums, simulated_chains, simulated_pendulums;
  int64_t simulated_instance_substeps;
  int32_t sleeping_chains, culled_by_distance, culled_by_budget, sleeping_pendulums;
  int32_t bound_ragdolls, disabled_ragdolls, simulated_ragdolls, sleeping_ragdolls, frozen_ragdolls;
  int32_t ragdoll_substeps, ragdoll_pairs, dropped_ragdoll_pairs, contact_ragdoll_pairs, ragdoll_islands,
      coloured_ragdoll_pairs;
  int32_t bound_characters, active_characters, dropped_character_events;
  int32_t snapped_teleport, snapped_wake, snapped_bad_input, reset_non_finite;
  int32_t chain_blocks, lanes_used;
  float lane_occupancy;
  int32_t budget_max_chains, budget_ragdoll_substeps; /* -1 / 0 when there is no budget */
  TendonBudgetAction budget_action;
  float budget_estimate_ms;
  TendonPhaseTimes times;
  int32_t contact_events, dropped_contact_events; /* queued by this step; lost (full, or undrained) */
  int32_t broken_drives; /* part drives that let go past their break distance this frame */
} TendonFrameStats;

/* One frame (see tendon::World::Step); never fails. stats may be NULL. */
TENDON_C_API void tendon_world_step(TendonWorld* world, float dt, TendonFrameStats* stats);
/* The frame in two halves (World::BeginStep / FinishStep): begin hands the frame to the task
   hooks and returns; finish waits and fills stats (may be NULL). Begin returns
   TENDON_ERROR_REENTRANT while a frame is in flight. The hooks must allow nested calls. */
TENDON_C_API TendonResult tendon_world_begin_step(TendonWorld* world, float dt);
/* Routes zones, counters and frame marks into the host's profiler (tendon/profiler_hooks.h:
   Tracy's C API, Superluminal, PIX...); NULL detaches. Replaces a trace file's hooks. */
TENDON_C_API TendonResult tendon_world_set_profiler_hooks(TendonWorld* world, const TendonProfilerHooks* hooks);
TENDON_C_API void tendon_world_finish_step(TendonWorld* world, TendonFrameStats* stats);
TENDON_C_API void tendon_world_last_stats(const TendonWorld* world, TendonFrameStats* stats);
TENDON_C_API void tendon_world_set_camera(TendonWorld* world, TendonVec3 position);
TENDON_C_API TendonResult tendon_world_set_max_chains(TendonWorld* world, int32_t max_chains);
/* Writes a Chrome trace (chrome://tracing, Perfetto) of every following Step to `path`;
 * NULL closes it. */
TENDON_C_API TendonResult tendon_world_set_trace_file(TendonWorld* world, const char* path);
/* Unbinds every instance (each hands its bones back); returns how many. */
TENDON_C_API int32_t tendon_world_unbind_all(TendonWorld* world);

/* ---- host callbacks ----
 * Each is a C function pointer and a context the world passes back untouched. Both are
 * called from the thread that calls tendon_world_step (or tendon_world_begin_step), inside
 * that call, never from a task hook's workers: the wind sampler once per frame that runs a
 * substep, the predicate once per bound chain per frame. Setting one never allocates, and
 * a step calls it without allocating. Inside a callback the world's mutating calls return
 * TENDON_ERROR_REENTRANT (queries are fine); so does setting a callback there or while a
 * frame is in flight (the frame is reading the one set). */
/* The wind (m/s) at `time_seconds` of the world's clock; a non-finite answer is ignored for
 * that frame (no wind) and counted in TendonFrameStats::snapped_bad_input. */
typedef TendonVec3 (*TendonWindSampleFn)(double time_seconds, void* user);
/* sample NULL: the settings' ambient wind again. */
TENDON_C_API TendonResult tendon_world_set_wind_sampler(TendonWorld* world, TendonWindSampleFn sample, void* user);
/* Non-zero: the chain (root_world: its root parent's position) simulates this frame; zero:
 * it sleeps at its animated pose. Replaces the distance test (max_chains still caps how
 * many of the chains it picks simulate); a chain whose root frame is not finite is not asked. */
typedef int32_t (*TendonSimulatePredicateFn)(TendonChainId chain, TendonVec3 root_world, void* user);
/* predicate NULL: the distance test again. */
TENDON_C_API TendonResult tendon_world_set_simulate_predicate(TendonWorld* world, TendonSimulatePredicateFn predicate,
                                                              void* user);

/* ---- debug draw (tendon/debug_draw.h) ----
 * tendon_world_draw_debug walks what the solver sees and calls the host's primitives: chain
 * nodes, links and colliders, ragdoll part shapes, joints and their limit fans, the last
 * frame's contacts with normals. Call it between steps; the callbacks run inside it on the
 * calling thread, and there the world's mutating calls (and a nested draw) return
 * TENDON_ERROR_REENTRANT. Any callback may be NULL (skipped). Colours are RGBA8 packed as
 * 0xRRGGBBAA. It allocates nothing, and a step costs the same whether a host draws or not. */
#define TENDON_DEBUG_DRAW_CHAIN_NODES 0x001u
#define TENDON_DEBUG_DRAW_CHAIN_LINKS 0x002u
#define TENDON_DEBUG_DRAW_CHAIN_COLLIDERS 0x004u
#define TENDON_DEBUG_DRAW_RAGDOLL_PARTS 0x008u
#define TENDON_DEBUG_DRAW_JOINTS 0x010u
#define TENDON_DEBUG_DRAW_JOINT_LIMITS 0x020u
#define TENDON_DEBUG_DRAW_CONTACTS 0x040u
/* Host bodies: none are drawn yet. Sleeping: sleeping things in their own colours. */
#define TENDON_DEBUG_DRAW_HOST_BODIES 0x080u
#define TENDON_DEBUG_DRAW_SLEEPING 0x100u
#define TENDON_DEBUG_DRAW_ALL 0x1FFu

/* The palette (tendon::DebugDrawColors; tendon_debug_draw_defaults fills the defaults). */
typedef struct TendonDebugDrawColors {
  uint32_t chain_node, chain_node_sleeping, chain_link, chain_link_sleeping, chain_collider;
  uint32_t ragdoll_part, ragdoll_part_kinematic, ragdoll_part_sleeping, ragdoll_part_frozen;
  uint32_t joint, joint_swing_limit, joint_twist_limit;
  uint32_t contact_point, contact_normal, host_body;
} TendonDebugDrawColors;

typedef void (*TendonDrawLineFn)(TendonVec3 from, TendonVec3 to, uint32_t color, void* user);
typedef void (*TendonDrawPointFn)(TendonVec3 position, float size, uint32_t color, void* user);
typedef void (*TendonDrawSphereFn)(TendonVec3 centre, float radius, uint32_t color, void* user);
/* The hull of a sphere of radius_a at a and one of radius_b at b (equal: a capsule). */
typedef void (*TendonDrawCapsuleFn)(TendonVec3 a, TendonVec3 b, float radius_a, float radius_b, uint32_t color,
                                    void* user);
typedef void (*TendonDrawBoxFn)(TendonTransform frame, TendonVec3 half_extents, uint32_t color, void* user);

typedef struct TendonDebugDraw {
  TendonDrawLineFn draw_line;
  TendonDrawPointFn draw_point;
  TendonDrawSphereFn draw_sphere;
  TendonDrawCapsuleFn draw_capsule;
  TendonDrawBoxFn draw_box;
  void* user;
  TendonDebugDrawColors colors;
  float point_size;    /* m, [0, 1e3], default 0.02: what draw_point receives */
  float normal_length; /* m, [0, 1e3], default 0.1: a contact normal's line; 0: no normals */
  float limit_length;  /* m, [0, 1e3], default 0.1: the joint-limit fans' radius; 0: no limits */
  float plane_size;    /* m, [0, 1e3], default 0.5: half the cross a plane collider is drawn as */
} TendonDebugDraw;
/* Every callback NULL, user NULL, the default palette and lengths. */
TENDON_C_API void tendon_debug_draw_defaults(TendonDebugDraw* draw);
/* TENDON_ERROR_NULL_ARGUMENT for a NULL world or draw; TENDON_ERROR_REENTRANT inside a step,
 * between begin_step and finish_step, or from one of its own callbacks;
 * TENDON_ERROR_OUT_OF_RANGE for a flag outside TENDON_DEBUG_DRAW_ALL or a length outside
 * [0, 1e3] m (the field is named). */
TENDON_C_API TendonResult tendon_world_draw_debug(const TendonWorld* world, const TendonDebugDraw* draw,
                                                  uint32_t flags);

/* ---- chains ---- */
typedef enum TendonChainModel { TENDON_CHAIN_MODEL_TENDON = 0, TENDON_CHAIN_MODEL_VRM = 1 } TendonChainModel;
typedef enum TendonColliderShape {
  TENDON_COLLIDER_SPHERE = 0,
  TENDON_COLLIDER_CAPSULE = 1,
  TENDON_COLLIDER_PLANE = 2
} TendonColliderShape;

typedef struct TendonChainBone {
  int32_t parent; /* -1 for a root; parents come first */
  TendonTransform rest_local;
  int32_t virtual_tip; /* bool: no host bone behind it (a leaf) */
} TendonChainBone;

typedef struct TendonChainSettings {
  float damping, stiffness, gravity_scale, wind_scale, node_radius;
  TendonVec3 gravity_push;
} TendonChainSettings;

/* A per-node override: each `has_*` says whether its value applies. */
typedef struct TendonChainNodeOverride {
  int32_t node;
  int32_t has_damping, has_stiffness, has_gravity_scale, has_wind_scale, has_radius, has_gravity_push,
      has_collider_mask, has_pinned;
  float damping, stiffness, gravity_scale, wind_scale, radius;
  TendonVec3 gravity_push;
  uint32_t collider_mask;
  int32_t pinned;
} TendonChainNodeOverride;

typedef struct TendonCollider {
  TendonColliderShape shape;
  int32_t inside; /* bool */
  int32_t bone;   /* a node of the chain, or -1: on host frame `frame` */
  int32_t frame;
  TendonVec3 a, b;
  float radius;
} TendonCollider;

typedef struct TendonChainArchetypeSettings {
  const char* name; /* may be NULL */
  TendonChainModel model;
  int32_t teleport_guard; /* -1: the model's default, 0 off, 1 on */
  const TendonChainBone* bones;
  int32_t bone_count;
  TendonChainSettings settings;
  const TendonChainNodeOverride* overrides;
  int32_t override_count;
  const TendonCollider* colliders;
  int32_t collider_count;
  /* Optional (NULL: none): bone_count entries, each -1 or, for a root, the host frame it
     hangs from (an index into the binding's collider_frames) instead of root_parent_world:
     ChainBone::parent_frame. A separate array so that bones filled field by field stay valid. */
  const int32_t* parent_frames;
  /* ChainArchetypeSettings::host_body_mask: the host-body collision groups the chain collides
     with (host spheres, capsules and boxes), 0 = none (the default). kTendon and kVrm alike. */
  uint32_t host_body_mask;
  /* ChainArchetypeSettings::max_host_bodies: the nearest matching host bodies per frame,
     [0, 16], default 4; read only when host_body_mask != 0. */
  int32_t max_host_bodies;
} TendonChainArchetypeSettings;

TENDON_C_API void tendon_chain_settings_defaults(TendonChainSettings* settings);
TENDON_C_API void tendon_chain_archetype_settings_defaults(TendonChainArchetypeSettings* settings);
TENDON_C_API TendonResult tendon_build_chain_archetype(TendonWorld* world, const TendonChainArchetypeSettings* settings,
                                                       TendonChainArchetypeId* out);
/* The bones of a built archetype (0 for a stale id). */
TENDON_C_API int32_t tendon_chain_bone_count(const TendonWorld* world, TendonChainArchetypeId archetype);
/* Forgets an archetype (its id is stale from then on): TENDON_ERROR_IN_USE while a chain of
 * it is bound. The same holds for the ragdoll and character archetypes below (a ragdoll
 * archetype a character archetype was built on is in use: removing the character's removes
 * both). */
TENDON_C_API TendonResult tendon_remove_chain_archetype(TendonWorld* world, TendonChainArchetypeId archetype);
/* tendon::ChainBone, tendon::ChainNodeOverride and tendon::ColliderSettings' defaults. */
TENDON_C_API void tendon_chain_bone_defaults(TendonChainBone* bone);
TENDON_C_API void tendon_chain_node_override_defaults(TendonChainNodeOverride* node_override);
TENDON_C_API void tendon_collider_defaults(TendonCollider* collider);

/* The host's buffers (see tendon::ChainBinding); bone_map and collider_frames may be NULL. */
/* ---- pose streams (tendon/pose_layout.h): poses written in the host's own layouts ---- */
typedef enum TendonPoseLayout {
  TENDON_POSE_LOCAL_TRS = 0,       /* translation, rotation, optional scale at byte offsets */
  TENDON_POSE_MODEL_MATRIX = 1,    /* inverse(model_world) * world */
  TENDON_POSE_SKINNING_MATRIX = 2  /* the model matrix * inverse bind: a skinning palette */
} TendonPoseLayout;
typedef enum TendonQuatOrder { TENDON_QUAT_XYZW = 0, TENDON_QUAT_WXYZ = 1 } TendonQuatOrder;
typedef enum TendonMatrixForm {
  TENDON_MATRIX_COLUMN_MAJOR_4X4 = 0, /* 16 floats: OpenGL, glTF, three.js */
  TENDON_MATRIX_ROW_MAJOR_3X4 = 1     /* 12 floats: D3D-style skinning constants */
} TendonMatrixForm;
/* One more array a binding's bones are written into each Step; see tendon/pose_layout.h
   for every field. Start from tendon_pose_stream_defaults. */
typedef struct TendonPoseStream {
  TendonPoseLayout layout;
  void* base;
  int32_t element_count;
  int32_t byte_stride; /* 0: packed */
  int32_t translation_offset, rotation_offset, scale_offset; /* TENDON_POSE_LOCAL_TRS; -1: not written */
  TendonQuatOrder rotation_order;
  TendonMatrixForm matrix_form;
  const TendonTransform* model_world; /* NULL: world space */
  const int32_t* element_of_bone;     /* NULL: the bone's own index */
  int32_t element_of_bone_count;
  const float* inverse_bind; /* TENDON_POSE_SKINNING_MATRIX: 16 floats per bone, column-major */
  int32_t inverse_bind_count; /* floats */
} TendonPoseStream;
TENDON_C_API void tendon_pose_stream_defaults(TendonPoseStream* stream);

typedef struct TendonChainBinding {
  TendonChainArchetypeId archetype;
  const TendonTransform* root_parent_world;
  const TendonTransform* animated_local;
  int32_t animated_count;
  TendonTransform* output_local;
  int32_t output_count;
  const int32_t* bone_map;
  int32_t bone_map_count;
  const TendonTransform* collider_frames;
  int32_t collider_frame_count;
  const TendonPoseStream* pose_streams; /* may be NULL: at most 4 */
  int32_t pose_stream_count;
  TendonTransform* output_world; /* may be NULL: each bone's world transform, indexed as output_local */
  int32_t output_world_count;
} TendonChainBinding;
/* Every field empty (archetype 0, every pointer NULL, every count 0). */
TENDON_C_API void tendon_chain_binding_defaults(TendonChainBinding* binding);

TENDON_C_API TendonResult tendon_bind_chain(TendonWorld* world, const TendonChainBinding* binding, TendonChainId* out);
TENDON_C_API TendonResult tendon_rebind_chain(TendonWorld* world, TendonChainId chain, const TendonChainBinding* binding);
TENDON_C_API TendonResult tendon_unbind_chain(TendonWorld* world, TendonChainId chain);
/* 1 while the handle is live (World::IsValid), else 0; likewise for pendulums, ragdolls and
 * characters below. */
TENDON_C_API int32_t tendon_chain_is_valid(const TendonWorld* world, TendonChainId chain);
TENDON_C_API int32_t tendon_chain_is_simulated(const TendonWorld* world, TendonChainId chain);
/* The nodes' world positions, in the archetype's order (out holds count >= its bones). */
TENDON_C_API TendonResult tendon_get_chain_node_positions(const TendonWorld* world, TendonChainId chain, TendonVec3* out,
                                                          int32_t count);

/* ---- pendulums ---- */
typedef struct TendonPendulumSettings {
  float damping, stiffness, gravity_scale, wind_scale, max_swing_degrees;
  TendonVec3 centre, up_axis;
} TendonPendulumSettings;
TENDON_C_API void tendon_pendulum_settings_defaults(TendonPendulumSettings* settings);
TENDON_C_API TendonResult tendon_bind_pendulum(TendonWorld* world, const TendonPendulumSettings* settings,
                                               const TendonTransform* joint_world, TendonTransform* accessory_offset,
                                               TendonPendulumId* out);
TENDON_C_API TendonResult tendon_unbind_pendulum(TendonWorld* world, TendonPendulumId pendulum);
TENDON_C_API int32_t tendon_pendulum_is_valid(const TendonWorld* world, TendonPendulumId pendulum);
/* The bob's world position and the swing angle (radians) now; either may be NULL. */
TENDON_C_API TendonResult tendon_get_pendulum_state(const TendonWorld* world, TendonPendulumId pendulum, TendonVec3* bob,
                                                    float* swing_radians);

/* ---- ragdolls ---- */
typedef enum TendonPartShape {
  TENDON_PART_CAPSULE = 0,
  TENDON_PART_TAPERED_CAPSULE = 1,
  TENDON_PART_SPHERE = 2,
  TENDON_PART_BOX = 3
} TendonPartShape;
typedef enum TendonJointType { TENDON_JOINT_SWING_TWIST = 0, TENDON_JOINT_HINGE = 1 } TendonJointType;

/* tendon::PartSettings with its shape, joint and motor flattened (tendon/ragdoll_settings.h). */
typedef struct TendonPartSettings {
  const char* name; /* may be NULL */
  int32_t parent;
  TendonTransform pose;
  TendonPartShape shape;
  float radius, top_radius, bottom_radius, half_height;
  TendonVec3 half_extents;
  TendonTransform shape_offset;
  float mass, mass_share, density, friction, restitution, linear_damping, angular_damping, gravity_factor,
      max_linear_speed, max_angular_speed;
  TendonJointType joint_type;
  TendonVec3 joint_anchor, twist_axis, plane_axis, child_twist_axis, child_plane_axis;
  float normal_half_cone_degrees, plane_half_cone_degrees, twist_min_degrees, twist_max_degrees, hinge_min_degrees,
      hinge_max_degrees, friction_torque_per_kg;
  float motor_frequency_hz, motor_damping_ratio, motor_max_torque_per_kg;
  int32_t motor_limb_inertia;
} TendonPartSettings;

/* tendon::ContactEventSettings (tendon/contact_events.h): which of an archetype's parts'
   contacts are reported. A began event needs both thresholds passed. */
typedef struct TendonContactEventSettings {
  int32_t enabled;        /* bool; 0: this archetype reports nothing */
  float min_impulse;      /* N s, >= 0 and finite; 0 disables this threshold */
  float min_normal_speed; /* m/s, >= 0 and finite; 0 disables this threshold */
  int32_t report_ended;   /* bool: an ended event when a reported contact is gone */
} TendonContactEventSettings;
TENDON_C_API void tendon_contact_event_settings_defaults(TendonContactEventSettings* settings);

typedef struct TendonRagdollSettings {
  const char* name;
  const TendonPartSettings* parts;
  int32_t part_count;
  float total_mass;
  int32_t stabilize; /* bool */
  float stabilize_max_mass_ratio, stabilize_min_inertia_ratio;
  const int32_t* self_collision_pairs; /* 2 part indices per pair */
  int32_t self_collision_pair_count;
  uint32_t collision_group, collision_mask;
  TendonContactEventSettings contact_events;
} TendonRagdollSettings;

TENDON_C_API void tendon_part_settings_defaults(TendonPartSettings* settings);
TENDON_C_API void tendon_ragdoll_settings_defaults(TendonRagdollSettings* settings);
TENDON_C_API TendonResult tendon_build_ragdoll_archetype(TendonWorld* world, const TendonRagdollSettings* settings,
                                                         TendonRagdollArchetypeId* out);
TENDON_C_API int32_t tendon_ragdoll_part_count(const TendonWorld* world, TendonRagdollArchetypeId archetype);
TENDON_C_API TendonResult tendon_remove_ragdoll_archetype(TendonWorld* world, TendonRagdollArchetypeId archetype);
/* tendon::RagdollPartInfo: what building made of a part. */
typedef struct TendonRagdollPartInfo {
  float mass;                   /* kg, after shares, density and stabilisation */
  TendonVec3 principal_inertia; /* kg m^2 about the centre of mass, along the body axes */
  TendonTransform body_pose;    /* the body frame (centre of mass, principal axes) in the build pose */
  float volume;                 /* m^3 of the shape */
} TendonRagdollPartInfo;
TENDON_C_API TendonResult tendon_get_ragdoll_part_info(const TendonWorld* world, TendonRagdollArchetypeId archetype,
                                                       int32_t part, TendonRagdollPartInfo* out);

/* ---- grab, drag, hold, push and throw (tendon/part_drive.h; docs/ragdolls.md) ---- */
#define TENDON_MAX_PART_DRIVES 4 /* drives per ragdoll at once (tendon::kMaxPartDrives) */
#define TENDON_MAX_PART_FORCES 4 /* parts of one ragdoll with a force at once (tendon::kMaxPartForces) */
/* tendon::PartDriveSettings, field for field; start from tendon_part_drive_settings_defaults. */
typedef struct TendonPartDriveSettings {
  int32_t part;             /* the part driven, [0, part count), not a kinematic root */
  TendonVec3 local_point;   /* m, in the part's frame */
  TendonVec3 target;        /* m, world */
  float response_time;      /* s, (0, 1000]: a lone body of the ragdoll's mass closes 98% of a step in it */
  float max_force;          /* N, > 0; INFINITY: no cap */
  float damping_ratio;      /* [0, 100]: 1 critical, 0 none */
  float break_distance;     /* m, > 0; INFINITY: never breaks */
} TendonPartDriveSettings;
/* tendon::PartDriveState (bools as int32_t); filled by tendon_get_part_drive_state. */
typedef struct TendonPartDriveState {
  int32_t active, broken;
  float distance; /* m, point to target at the end of the last frame */
  float force;    /* N, the last substep's pull (0 once broken) */
  TendonVec3 target;
} TendonPartDriveState;
TENDON_C_API void tendon_part_drive_settings_defaults(TendonPartDriveSettings* settings);
TENDON_C_API TendonResult tendon_add_part_drive(TendonWorld* world, TendonRagdollId ragdoll,
                                                const TendonPartDriveSettings* settings, TendonPartDriveId* out);
TENDON_C_API TendonResult tendon_set_part_drive_target(TendonWorld* world, TendonPartDriveId drive, TendonVec3 target);
TENDON_C_API TendonResult tendon_remove_part_drive(TendonWorld* world, TendonPartDriveId drive);
TENDON_C_API TendonResult tendon_get_part_drive_state(const TendonWorld* world, TendonPartDriveId drive,
                                                      TendonPartDriveState* out);
TENDON_C_API int32_t tendon_part_drive_is_valid(const TendonWorld* world, TendonPartDriveId drive);
/* m/s^2 on every dynamic part until changed (zero: off). */
TENDON_C_API TendonResult tendon_set_ragdoll_acceleration(TendonWorld* world, TendonRagdollId ragdoll,
                                                          TendonVec3 acceleration);
/* N at a part's centre of mass until changed (zero: off); at most TENDON_MAX_PART_FORCES parts. */
TENDON_C_API TendonResult tendon_set_ragdoll_part_force(TendonWorld* world, TendonRagdollId ragdoll, int32_t part,
                                                        TendonVec3 force);
/* Every dynamic part leaves at ThrowSpeed(strength, unanchored mass, min_speed, max_speed)
   along direction; *velocity (may be NULL) receives the velocity given. */
TENDON_C_API TendonResult tendon_throw_ragdoll(TendonWorld* world, TendonRagdollId ragdoll, TendonVec3 direction,
                                               float strength, float min_speed, float max_speed, TendonVec3* velocity);

/* The static world: planes, spheres, capsules, boxes, one heightfield and one mesh. */
typedef struct TendonStaticWorldSettings {
  const TendonVec3* plane_normals; /* with plane_offsets: dot(normal, x) = offset */
  const float* plane_offsets;
  int32_t plane_count;
  const TendonVec3* sphere_centres;
  const float* sphere_radii;
  int32_t sphere_count;
  const TendonVec3* capsule_ends; /* 2 per capsule */
  const float* capsule_radii;
  int32_t capsule_count;
  const TendonTransform* box_poses;
  const TendonVec3* box_half_extents;
  int32_t box_count;
  TendonVec3 heightfield_origin;
  int32_t heightfield_samples_x, heightfield_samples_z; /* 0: none */
  float heightfield_spacing;
  const float* heightfield_heights;
  const TendonVec3* mesh_vertices;
  int32_t mesh_vertex_count;
  const uint32_t* mesh_indices;
  int32_t mesh_index_count;
} TendonStaticWorldSettings;
/* Every shape empty (every pointer NULL, every count 0). */
TENDON_C_API void tendon_static_world_settings_defaults(TendonStaticWorldSettings* settings);
TENDON_C_API TendonResult tendon_build_static_world(TendonWorld* world, const TendonStaticWorldSettings* settings);

typedef enum TendonCollideMode { TENDON_COLLIDE_ALL = 0, TENDON_COLLIDE_STATIC = 1 } TendonCollideMode;

typedef struct TendonRagdollBinding {
  TendonRagdollArchetypeId archetype;
  TendonTransform placement;
  const TendonTransform* start_parts; /* NULL: the build pose under placement */
  int32_t start_part_count;
  TendonVec3 linear_velocity, angular_velocity;
  TendonTransform* output_parts;
  int32_t output_part_count;
  const TendonTransform* kinematic_root; /* may be NULL */
  int32_t freeze_when_asleep;
  float freeze_after_seconds;
  TendonVec3 planar_normal;
  TendonCollideMode collide_mode;
  int32_t enabled;
  const TendonPoseStream* pose_streams; /* may be NULL: at most 4 */
  int32_t pose_stream_count;
} TendonRagdollBinding;
TENDON_C_API void tendon_ragdoll_binding_defaults(TendonRagdollBinding* binding);
TENDON_C_API TendonResult tendon_bind_ragdoll(TendonWorld* world, const TendonRagdollBinding* binding, TendonRagdollId* out);
TENDON_C_API TendonResult tendon_unbind_ragdoll(TendonWorld* world, TendonRagdollId ragdoll);
TENDON_C_API TendonResult tendon_set_ragdoll_enabled(TendonWorld* world, TendonRagdollId ragdoll, int32_t enabled);
/* TENDON_ERROR_INACTIVE while the ragdoll is switched off (nothing is stored for later). */
TENDON_C_API TendonResult tendon_apply_ragdoll_impulse(TendonWorld* world, TendonRagdollId ragdoll, int32_t part,
                                                       TendonVec3 impulse, TendonVec3 world_point);
TENDON_C_API TendonResult tendon_wake_ragdoll(TendonWorld* world, TendonRagdollId ragdoll);
TENDON_C_API int32_t tendon_ragdoll_is_asleep(const TendonWorld* world, TendonRagdollId ragdoll);
TENDON_C_API int32_t tendon_ragdoll_is_valid(const TendonWorld* world, TendonRagdollId ragdoll);
TENDON_C_API int32_t tendon_ragdoll_is_enabled(const TendonWorld* world, TendonRagdollId ragdoll);
TENDON_C_API int32_t tendon_ragdoll_is_frozen(const TendonWorld* world, TendonRagdollId ragdoll);
/* Makes the root part kinematic, following *root (read every step: it must stay valid
 * while set), or dynamic again (NULL). Allocates a lane the first time an instance of the
 * archetype switches, unless tendon_reserve_ragdoll_kinematic_toggle reserved one. */
TENDON_C_API TendonResult tendon_set_ragdoll_kinematic_root(TendonWorld* world, TendonRagdollId ragdoll,
                                                            const TendonTransform* root);
/* Reserves lanes so that `instances` more instances can toggle their kinematic root without
 * allocating (negative: gives reservations back). */
TENDON_C_API TendonResult tendon_reserve_ragdoll_kinematic_toggle(TendonWorld* world, TendonRagdollArchetypeId archetype,
                                                                  int32_t instances);
/* Motor targets: entry j (j >= 1) is part j's rotation relative to its parent part's frame;
 * entry 0 is ignored. rotation_count is the part count. local_angular_velocities (rad/s in
 * the parent part's frame) may be NULL (count 0), else part-count entries. strength in
 * [0, 1] scales every motor's torque cap; 0 turns them off. */
TENDON_C_API TendonResult tendon_set_ragdoll_motor_targets(TendonWorld* world, TendonRagdollId ragdoll,
                                                           const TendonQuat* local_rotations, int32_t rotation_count,
                                                           float strength, const TendonVec3* local_angular_velocities,
                                                           int32_t angular_velocity_count);
/* Puts every part at a world frame (part_count entries) with linear (m/s) and angular
 * (rad/s) velocities: NULL with count 0 means at rest, else part_count entries. Forgets
 * contacts and wakes it. */
TENDON_C_API TendonResult tendon_set_ragdoll_part_states(TendonWorld* world, TendonRagdollId ragdoll,
                                                         const TendonTransform* parts, int32_t part_count,
                                                         const TendonVec3* linear, int32_t linear_count,
                                                         const TendonVec3* angular, int32_t angular_count);
/* One part's linear (m/s, at its origin) and angular (rad/s) velocity; wakes the ragdoll. */
TENDON_C_API TendonResult tendon_set_ragdoll_part_velocity(TendonWorld* world, TendonRagdollId ragdoll, int32_t part,
                                                           TendonVec3 linear, TendonVec3 angular);
/* Every part's centre-of-mass velocity and angular velocity, world space: `count` entries in
 * each array (the part count). */
TENDON_C_API TendonResult tendon_get_ragdoll_velocities(const TendonWorld* world, TendonRagdollId ragdoll,
                                                        TendonVec3* linear, TendonVec3* angular, int32_t count);
/* Every part's world frame as the last Step left it (what its output_parts holds), for any
 * ragdoll, a character's included: `out` has room for `capacity` (at least the part count;
 * 64 always does); *part_count (may be NULL) gets the part count. */
TENDON_C_API TendonResult tendon_get_ragdoll_part_transforms(const TendonWorld* world, TendonRagdollId ragdoll,
                                                             TendonTransform* out, int32_t capacity,
                                                             int32_t* part_count);
/* Whether it may fall asleep, and freezing as in TendonRagdollBinding (bools as int32_t). */
TENDON_C_API TendonResult tendon_set_ragdoll_sleeping(TendonWorld* world, TendonRagdollId ragdoll, int32_t can_sleep,
                                                      int32_t freeze_when_asleep, float freeze_after_seconds);

typedef struct TendonRaycastHit {
  TendonRagdollId ragdoll; /* 0 for the static world */
  int32_t part;
  int32_t static_shape;
  TendonVec3 point, normal;
  float distance;
} TendonRaycastHit;
/* 1 on a hit (filled into *hit), 0 otherwise. */
TENDON_C_API int32_t tendon_raycast_ragdolls(const TendonWorld* world, TendonVec3 origin, TendonVec3 direction,
                                             float max_distance, TendonRaycastHit* hit);
TENDON_C_API int32_t tendon_raycast_static(const TendonWorld* world, TendonVec3 origin, TendonVec3 direction,
                                           float max_distance, TendonRaycastHit* hit);

/* ---- host bodies (tendon/host_body.h): kinematic shapes the host moves ---- */
typedef enum TendonHostBodyShape {
  TENDON_HOST_BODY_SPHERE = 0,
  TENDON_HOST_BODY_CAPSULE = 1, /* along its local Y axis */
  TENDON_HOST_BODY_BOX = 2
} TendonHostBodyShape;
typedef struct TendonHostBodySettings {
  TendonHostBodyShape shape;
  float radius;      /* m, (0, 100]: spheres and capsules */
  float half_height; /* m, [0, 100]: a capsule's half segment */
  TendonVec3 half_extents; /* m, each (0, 1000]: boxes */
  TendonTransform transform;
  TendonVec3 linear_velocity, angular_velocity; /* m/s, rad/s; each at most 1000 */
  uint32_t collision_group, collision_mask;
  int32_t trigger; /* bool: reports overlaps, pushes nothing */
  float friction;    /* [0, 10] */
  float restitution; /* [0, 1] */
} TendonHostBodySettings;
TENDON_C_API void tendon_host_body_settings_defaults(TendonHostBodySettings* settings);
typedef struct TendonHostBodyState {
  TendonTransform transform;
  TendonVec3 linear_velocity, angular_velocity;
  int32_t overlapping_parts; /* triggers: parts inside it after the last step */
} TendonHostBodyState;
TENDON_C_API TendonResult tendon_add_host_body(TendonWorld* world, const TendonHostBodySettings* settings,
                                               TendonHostBodyId* out);
TENDON_C_API TendonResult tendon_remove_host_body(TendonWorld* world, TendonHostBodyId body);
TENDON_C_API int32_t tendon_host_body_is_valid(const TendonWorld* world, TendonHostBodyId body);
/* Where it is now and the velocities it moves on with (World::SetHostBodyMotion). */
TENDON_C_API TendonResult tendon_set_host_body_motion(TendonWorld* world, TendonHostBodyId body,
                                                      const TendonTransform* transform, TendonVec3 linear_velocity,
                                                      TendonVec3 angular_velocity);
/* Where it is at the end of the next frame that steps (World::MoveHostBodyTo). */
TENDON_C_API TendonResult tendon_move_host_body_to(TendonWorld* world, TendonHostBodyId body,
                                                   const TendonTransform* target);
TENDON_C_API TendonResult tendon_get_host_body_state(const TendonWorld* world, TendonHostBodyId body,
                                                     TendonHostBodyState* out);
TENDON_C_API int32_t tendon_host_body_count(const TendonWorld* world);

/* ---- characters ---- */
typedef struct TendonHumanoidBone {
  const char* role; /* "hips", "spine", "leftUpperLeg", ... (VRM's humanoid names) */
  int32_t bone;
} TendonHumanoidBone;
/* role NULL, bone -1. */
TENDON_C_API void tendon_humanoid_bone_defaults(TendonHumanoidBone* bone);

typedef enum TendonLimitSource { TENDON_LIMITS_TABLE = 0, TENDON_LIMITS_CLIPS = 1 } TendonLimitSource;
/* What an inactive character's parts do (tendon::CharacterInactiveBodies). */
typedef enum TendonInactiveBodies {
  TENDON_INACTIVE_BODIES_NONE = 0,
  TENDON_INACTIVE_BODIES_KINEMATIC = 1 /* kinematic bodies that follow the animated pose */
} TendonInactiveBodies;

typedef struct TendonSampledClip {
  const char* name;
  int32_t frame_count;
  const TendonTransform* local; /* frame_count x bone_count, frame-major */
} TendonSampledClip;
/* An empty clip (name NULL, no frames). */
TENDON_C_API void tendon_sampled_clip_defaults(TendonSampledClip* clip);

/* tendon::CharacterHinge: a hinge's axis in the model's rest space and its fold range. */
typedef struct TendonCharacterHinge {
  TendonVec3 axis;
  float min_degrees, max_degrees;
} TendonCharacterHinge;
TENDON_C_API void tendon_character_hinge_defaults(TendonCharacterHinge* hinge);
/* tendon::CharacterPartSettings: one part of an explicit list (a capsule on `bone`). */
typedef struct TendonCharacterPartSettings {
  const char* bone;
  const char* to;     /* NULL or "": a leaf, `length` long */
  const char* parent; /* NULL or "": the previous part */
  const char* name;   /* NULL or "": the bone's name */
  float radius, length, mass_share;
  TendonVec3 leaf_direction;
  float swing_degrees, twist_degrees;
  int32_t has_hinge; /* bool: the joint is `hinge`, not a swing-twist cone */
  TendonCharacterHinge hinge;
} TendonCharacterPartSettings;
TENDON_C_API void tendon_character_part_settings_defaults(TendonCharacterPartSettings* part);
/* tendon::JointLimitOverride: one joint's limits, by part name. */
typedef struct TendonJointLimitOverride {
  const char* part;
  float swing_degrees, twist_degrees;
} TendonJointLimitOverride;
TENDON_C_API void tendon_joint_limit_override_defaults(TendonJointLimitOverride* limit_override);

/* A character over a skeleton (tendon::CharacterSettings): the humanoid layout, explicit
 * parts, or a whole ragdoll. */
typedef struct TendonCharacterSettings {
  const char* name;
  int32_t bone_count;
  const char* const* bone_names;
  const int32_t* bone_parents;
  const TendonTransform* bone_rest_local;
  const TendonHumanoidBone* humanoid_bones; /* may be NULL: bones matched by name */
  int32_t humanoid_bone_count;
  float total_mass, friction, linear_damping, angular_damping;
  float drive_frequency_hz, drive_damping_ratio, drive_torque_per_kg, joint_friction_per_kg;
  TendonLimitSource limit_source;
  const TendonSampledClip* limit_clips;
  int32_t limit_clip_count;
  float limits_margin_degrees;
  uint32_t collision_group, collision_mask;
  /* Explicit parts, parents first (NULL, 0: the humanoid layout). */
  const TendonCharacterPartSettings* parts;
  int32_t part_count;
  /* NULL, or a whole ragdoll: part i sits on the bone named parts[i].name, posed at that
     bone's rest frame in model space (read at build; e.g. tendon_jolt_ragdoll_settings). */
  const TendonRagdollSettings* ragdoll;
  const TendonJointLimitOverride* limit_overrides; /* applied after the table */
  int32_t limit_override_count;
  TendonInactiveBodies inactive_bodies;
} TendonCharacterSettings;
TENDON_C_API void tendon_character_settings_defaults(TendonCharacterSettings* settings);
TENDON_C_API TendonResult tendon_build_character_archetype(TendonWorld* world, const TendonCharacterSettings* settings,
                                                           TendonCharacterArchetypeId* out);
TENDON_C_API int32_t tendon_character_part_count(const TendonWorld* world, TendonCharacterArchetypeId archetype);
TENDON_C_API TendonResult tendon_remove_character_archetype(TendonWorld* world, TendonCharacterArchetypeId archetype);
/* tendon::CharacterPartInfo: what building made of a part, and the bone it sits on. */
typedef struct TendonCharacterPartInfo {
  char name[128]; /* NUL-terminated; a longer name is cut at 127 bytes (name_truncated 1) */
  int32_t name_truncated;
  int32_t bone;   /* the skeleton bone it sits on */
  int32_t parent; /* parent part, -1 for the root */
  TendonJointType joint;
  float normal_half_cone_degrees, plane_half_cone_degrees, twist_min_degrees, twist_max_degrees, hinge_min_degrees,
      hinge_max_degrees;
  float mass; /* kg */
} TendonCharacterPartInfo;
TENDON_C_API TendonResult tendon_get_character_part_info(const TendonWorld* world, TendonCharacterArchetypeId archetype,
                                                         int32_t part, TendonCharacterPartInfo* out);
/* -1 when the archetype has no part of that name. */
TENDON_C_API int32_t tendon_find_character_part(const TendonWorld* world, TendonCharacterArchetypeId archetype,
                                                const char* name);

typedef struct TendonCharacterBinding {
  TendonCharacterArchetypeId archetype;
  const TendonTransform* model_world;
  const TendonTransform* animated_local;
  TendonTransform* output_local;
  TendonTransform* output_world; /* may be NULL */
  int32_t bone_count;            /* of each buffer */
  TendonCollideMode collide_mode;
  TendonVec3 planar_normal;
  int32_t freeze_when_settled;
  float freeze_after_seconds;
  const TendonPoseStream* pose_streams; /* may be NULL: at most 4 */
  int32_t pose_stream_count;
} TendonCharacterBinding;
TENDON_C_API void tendon_character_binding_defaults(TendonCharacterBinding* binding);
TENDON_C_API TendonResult tendon_bind_character(TendonWorld* world, const TendonCharacterBinding* binding,
                                                TendonCharacterId* out);
TENDON_C_API TendonResult tendon_rebind_character(TendonWorld* world, TendonCharacterId character,
                                                  const TendonCharacterBinding* binding);
TENDON_C_API TendonResult tendon_unbind_character(TendonWorld* world, TendonCharacterId character);
TENDON_C_API int32_t tendon_character_is_valid(const TendonWorld* world, TendonCharacterId character);

typedef struct TendonActivateOptions {
  TendonVec3 launch_velocity, impulse;
  float strength; /* < 0: keep the character's */
  int32_t anchored; /* -1: keep the character's */
  float duration_seconds;
  float release_blend_seconds;
} TendonActivateOptions;
TENDON_C_API void tendon_activate_options_defaults(TendonActivateOptions* options);
TENDON_C_API TendonResult tendon_activate_character(TendonWorld* world, TendonCharacterId character,
                                                    const TendonActivateOptions* options /* NULL: defaults */);
typedef enum TendonHandBackSpace {
  TENDON_HAND_BACK_AUTO = 0,
  TENDON_HAND_BACK_WORLD = 1,
  TENDON_HAND_BACK_MODEL = 2
} TendonHandBackSpace;
TENDON_C_API TendonResult tendon_deactivate_character(TendonWorld* world, TendonCharacterId character,
                                                      float blend_seconds, TendonHandBackSpace space);
TENDON_C_API TendonResult tendon_set_character_strength(TendonWorld* world, TendonCharacterId character, float strength);
TENDON_C_API TendonResult tendon_set_character_anchored(TendonWorld* world, TendonCharacterId character, int32_t anchored);
typedef struct TendonHitOptions {
  float duration_seconds, blend_seconds, strength;
} TendonHitOptions;
TENDON_C_API void tendon_hit_options_defaults(TendonHitOptions* options);
TENDON_C_API TendonResult tendon_hit_character(TendonWorld* world, TendonCharacterId character, int32_t part,
                                               TendonVec3 impulse, TendonVec3 world_point,
                                               const TendonHitOptions* options /* NULL: defaults */);
TENDON_C_API TendonResult tendon_character_go_limp(TendonWorld* world, TendonCharacterId character, float seconds);
TENDON_C_API TendonResult tendon_apply_character_impulse(TendonWorld* world, TendonCharacterId character,
                                                         TendonVec3 impulse);
/* An impulse (N s) at a world point of one part. */
TENDON_C_API TendonResult tendon_apply_character_part_impulse(TendonWorld* world, TendonCharacterId character,
                                                              int32_t part, TendonVec3 impulse, TendonVec3 world_point);

typedef enum TendonFacing { TENDON_FACING_UP = 0, TENDON_FACING_DOWN = 1, TENDON_FACING_SIDE = 2 } TendonFacing;
typedef struct TendonCharacterState {
  int32_t active, blending_out, settled, anchored;
  float strength;
  uint32_t generation;
  TendonTransform root;
  TendonVec3 root_velocity;
  float speed, total_mass, unanchored_mass;
  TendonFacing facing;
  float heading_degrees;
} TendonCharacterState;
TENDON_C_API TendonResult tendon_get_character_state(const TendonWorld* world, TendonCharacterId character,
                                                     TendonCharacterState* out);
TENDON_C_API TendonResult tendon_get_character_recovery_root(const TendonWorld* world, TendonCharacterId character,
                                                             float leg_room, TendonTransform* out);
TENDON_C_API TendonRagdollId tendon_character_ragdoll(const TendonWorld* world, TendonCharacterId character);
/* The character a ragdoll belongs to; 0 when none. */
TENDON_C_API TendonCharacterId tendon_character_of_ragdoll(const TendonWorld* world, TendonRagdollId ragdoll);
TENDON_C_API int32_t tendon_active_character_count(const TendonWorld* world);
TENDON_C_API int32_t tendon_bound_character_count(const TendonWorld* world);

typedef enum TendonEventType { TENDON_EVENT_STARTED = 0, TENDON_EVENT_ENDED = 1 } TendonEventType;
typedef enum TendonEndReason {
  TENDON_END_RELEASED = 0,
  TENDON_END_EVICTED = 1,
  TENDON_END_EXPIRED = 2,
  TENDON_END_REMOVED = 3
} TendonEndReason;
typedef struct TendonCharacterEvent {
  TendonEventType type;
  TendonCharacterId character;
  uint32_t generation;
  TendonEndReason reason;
  double time;
} TendonCharacterEvent;
/* Moves up to `capacity` queued events into out; returns how many. */
TENDON_C_API int32_t tendon_drain_character_events(TendonWorld* world, TendonCharacterEvent* out, int32_t capacity);

/* ---- contact and impact events (tendon/contact_events.h) ---- */
typedef enum TendonContactEventKind {
  TENDON_CONTACT_BEGAN = 0,
  TENDON_CONTACT_ENDED = 1,
  TENDON_CONTACT_DRIVE_BROKEN = 2 /* a part drive let go past its break distance (b_drive) */
} TendonContactEventKind;
typedef enum TendonContactSide {
  TENDON_CONTACT_SIDE_STATIC_WORLD = 0,
  TENDON_CONTACT_SIDE_RAGDOLL_PART = 1,
  TENDON_CONTACT_SIDE_HOST_BODY = 2,
  TENDON_CONTACT_SIDE_PART_DRIVE = 3
} TendonContactSide;
/* tendon::ContactEvent: side A is a ragdoll part; the normal points from B toward A. */
typedef struct TendonContactEvent {
  TendonContactEventKind kind;
  TendonRagdollId ragdoll;
  int32_t part;
  TendonCharacterId character; /* 0: the ragdoll is no character's */
  TendonContactSide b_kind;
  TendonRagdollId b_ragdoll;   /* TENDON_CONTACT_SIDE_RAGDOLL_PART */
  int32_t b_part;              /* TENDON_CONTACT_SIDE_RAGDOLL_PART, else -1 */
  uint64_t b_host_body;        /* TENDON_CONTACT_SIDE_HOST_BODY: the host body's id */
  TendonPartDriveId b_drive;   /* TENDON_CONTACT_SIDE_PART_DRIVE: the drive that broke */
  TendonVec3 point, normal;    /* world; a broken drive: its point, and from the target toward it */
  float normal_speed;          /* m/s, >= 0: the fastest approach over the frame */
  float impulse;               /* N s, >= 0: the normal impulse over the frame */
  float distance;              /* m, TENDON_CONTACT_DRIVE_BROKEN: point to target when it let go */
  double time;                 /* world clock, seconds */
} TendonContactEvent;
/* Moves up to `capacity` of the last step's contact events into out (in their order) and
   returns how many; NULL world or out, or capacity <= 0, moves none and returns 0. Each
   step starts a fresh queue (the undrained are counted as dropped). */
TENDON_C_API int32_t tendon_world_drain_contact_events(TendonWorld* world, TendonContactEvent* out, int32_t capacity);

/* ---- saved states (World::SaveState / RestoreState; tendon/snapshot.h, docs/snapshots.md) ----
 * The simulation state of the whole world, or of one ragdoll, character or chain, as bytes
 * the host owns: restoring them (into the same world, or one built the same way with the
 * same instances bound in the same order) and stepping on gives the same bits as stepping
 * on from the save. Between steps only (TENDON_ERROR_REENTRANT while a frame is in flight).
 * A restore checks everything before it writes anything: a refused buffer (truncated,
 * foreign, corrupted, of another version or world, non-finite) changes nothing, and the
 * error names the field. Neither call allocates, except restoring a kinematic root onto a
 * ragdoll whose archetype has no lane reserved for one (and the error of a refusal). */
/* Bytes a save needs (0 for a NULL world, a stale handle, or while a frame is in flight). */
TENDON_C_API size_t tendon_world_saved_state_size(const TendonWorld* world);
/* Writes the state into out[0, capacity) and its size into *written; TENDON_ERROR_NULL_BUFFER
   when capacity is smaller than tendon_world_saved_state_size. */
TENDON_C_API TendonResult tendon_world_save_state(const TendonWorld* world, uint8_t* out, size_t capacity,
                                                  size_t* written);
TENDON_C_API TendonResult tendon_world_restore_state(TendonWorld* world, const uint8_t* bytes, size_t size);
TENDON_C_API size_t tendon_saved_ragdoll_state_size(const TendonWorld* world, TendonRagdollId ragdoll);
TENDON_C_API TendonResult tendon_save_ragdoll_state(const TendonWorld* world, TendonRagdollId ragdoll, uint8_t* out,
                                                    size_t capacity, size_t* written);
TENDON_C_API TendonResult tendon_restore_ragdoll_state(TendonWorld* world, TendonRagdollId ragdoll, const uint8_t* bytes,
                                                       size_t size);
TENDON_C_API size_t tendon_saved_character_state_size(const TendonWorld* world, TendonCharacterId character);
TENDON_C_API TendonResult tendon_save_character_state(const TendonWorld* world, TendonCharacterId character,
                                                      uint8_t* out, size_t capacity, size_t* written);
TENDON_C_API TendonResult tendon_restore_character_state(TendonWorld* world, TendonCharacterId character,
                                                         const uint8_t* bytes, size_t size);
TENDON_C_API size_t tendon_saved_chain_state_size(const TendonWorld* world, TendonChainId chain);
TENDON_C_API TendonResult tendon_save_chain_state(const TendonWorld* world, TendonChainId chain, uint8_t* out,
                                                  size_t capacity, size_t* written);
TENDON_C_API TendonResult tendon_restore_chain_state(TendonWorld* world, TendonChainId chain, const uint8_t* bytes,
                                                     size_t size);

/* ---- following received poses, and the ownership handover (World::FollowRagdoll;
 * tendon/follow.h, docs/snapshots.md) ----
 * A followed ragdoll's parts are steered, as dynamic bodies that still push and are
 * pushed, toward the pose the pushed samples give at the follow clock minus the
 * interpolation delay (interpolated, extrapolated along velocities when a sample is late).
 * tendon_stop_following hands it to this world: it simulates on from the state it shows.
 * Saved states are refused (TENDON_ERROR_IN_USE) while any ragdoll is followed. */
#define TENDON_FOLLOW_SAMPLE_CAPACITY 16 /* samples kept per followed ragdoll (tendon::kFollowSampleCapacity) */
/* tendon::FollowSettings, field for field; start from tendon_follow_settings_defaults. */
typedef struct TendonFollowSettings {
  float interpolation_delay_seconds; /* s, (0, 10]: how far behind the follow clock the pose shown is */
  float max_extrapolation_seconds;   /* s, [0, 10]: past the newest sample, then held; 0: never */
  float response_seconds;            /* s, [0, 10]: 0 reaches the target each frame; larger: softer */
  float max_speed;                   /* m/s, (0, 1e4]: a part's steering speed cap */
  float snap_distance;               /* m, > 0: further, the whole body is placed; INFINITY: never */
} TendonFollowSettings;
TENDON_C_API void tendon_follow_settings_defaults(TendonFollowSettings* settings);
/* Allocates the ragdoll's ring of samples. Following already: the new settings. */
TENDON_C_API TendonResult tendon_follow_ragdoll(TendonWorld* world, TendonRagdollId ragdoll,
                                                const TendonFollowSettings* settings);
/* One sample: the sender's time (s), part_count part frames (the ragdoll's part count), and
   optionally every part's centre-of-mass and angular velocity (both NULL with count 0, or
   both part_count long). An old or duplicate sample is dropped (TENDON_OK). */
TENDON_C_API TendonResult tendon_push_follow_sample(TendonWorld* world, TendonRagdollId ragdoll, double sample_time,
                                                    const TendonTransform* parts, int32_t part_count,
                                                    const TendonVec3* linear, const TendonVec3* angular,
                                                    int32_t velocity_count);
TENDON_C_API TendonResult tendon_stop_following(TendonWorld* world, TendonRagdollId ragdoll);
TENDON_C_API int32_t tendon_is_following(const TendonWorld* world, TendonRagdollId ragdoll);
/* The follow clock is `now` (s) at the world's current simulated time, and advances with it. */
TENDON_C_API TendonResult tendon_set_follow_clock(TendonWorld* world, double now);
TENDON_C_API double tendon_follow_clock(const TendonWorld* world); /* 0 for a NULL world */
/* ---- network snapshots (tendon/net_snapshot.h; docs/snapshots.md, "Network snapshots") ----
 * A ragdoll's pose as a small lossy message for every network tick, and a character's
 * state changes as a message of their own. The codecs are pure functions (any thread, no
 * world: a refusal is reported by tendon_last_error only); the capture and apply calls
 * are the world's. Nothing allocates, except the error of a refusal. A refused decode
 * writes nothing. */
typedef struct TendonNetPoseSettings {
  float position_precision; /* m, [1e-5, 1]: a part's position relative to the root, per axis */
  float position_range;     /* m, [position_precision, 1e4]: beyond it a part is sent as floats */
  int32_t rotation_bits;    /* [6, 15] bits per smallest-three component */
  int32_t include_velocities; /* 0: not sent (decoded as zeros) */
  float linear_precision, linear_range;   /* m/s: (1e-5, 10], (precision, 1e3]; clamped to the range */
  float angular_precision, angular_range; /* rad/s: likewise */
} TendonNetPoseSettings;
TENDON_C_API void tendon_net_pose_settings_defaults(TendonNetPoseSettings* settings);
/* A pose over the host's arrays (tendon::NetPose): parts[part_count] world frames, part 0
   the root; linear and angular NULL or part_count each. The decoder writes tick, asleep,
   has_velocities and the arrays. */
typedef struct TendonNetPose {
  uint32_t tick;
  TendonTransform* parts;
  int32_t part_count;
  TendonVec3* linear;  /* may be NULL */
  TendonVec3* angular; /* may be NULL (with linear) */
  int32_t asleep;
  int32_t has_velocities;
} TendonNetPose;
/* The most bytes an encoded pose of part_count parts takes (0 for bad settings or count);
   settings NULL: the defaults. */
TENDON_C_API size_t tendon_max_net_pose_bytes(int32_t part_count, const TendonNetPoseSettings* settings);
/* Encodes pose (against baseline, NULL: a full pose) into out[0, capacity); *written gets
   the size. TENDON_ERROR_NULL_BUFFER when capacity is too small (the error names the size). */
TENDON_C_API TendonResult tendon_encode_net_pose(const TendonNetPose* pose, const TendonNetPose* baseline,
                                                 const TendonNetPoseSettings* settings, uint8_t* out,
                                                 size_t capacity, size_t* written);
/* Decodes bytes into *out (its arrays the host's, part_count the message's:
   tendon_net_pose_part_count says how many); a delta needs its baseline (the pose the
   receiver decoded at the baseline's tick). */
TENDON_C_API TendonResult tendon_decode_net_pose(const uint8_t* bytes, size_t size, const TendonNetPose* baseline,
                                                 const TendonNetPoseSettings* settings, TendonNetPose* out);
TENDON_C_API TendonResult tendon_net_pose_part_count(const uint8_t* bytes, size_t size, int32_t* out);
/* Which baseline a message needs: *out = -1 for a full pose, else the low 16 bits of the
   baseline's tick (a receiver holding several baselines passes the one that matches). */
TENDON_C_API TendonResult tendon_net_pose_baseline_tick(const uint8_t* bytes, size_t size, int32_t* out);
/* The ragdoll's part frames and velocities (when out->linear is not NULL) at the world's
   time, the last substep's (the output without render interpolation; a substep ahead of the
   interpolated output), and its asleep flag into *out (part_count: the ragdoll's);
   out->tick is left as the host set it. */
TENDON_C_API TendonResult tendon_capture_ragdoll_pose(const TendonWorld* world, TendonRagdollId ragdoll,
                                                      TendonNetPose* out);
typedef struct TendonNetCharacterState {
  uint32_t generation; /* the sender's activation count */
  int32_t active, anchored, limp;
  float limp_seconds;  /* [0, 25.5] s, sent in 0.1 s steps (limp only) */
  float strength;      /* [0, 1], sent in 1/255 steps */
  TendonVec3 impulse;  /* N s on the whole body, applied once (zero: none); |x| <= 1e8 */
} TendonNetCharacterState;
TENDON_C_API void tendon_net_character_state_defaults(TendonNetCharacterState* state);
/* At most TENDON_MAX_NET_CHARACTER_STATE_BYTES bytes. */
#define TENDON_MAX_NET_CHARACTER_STATE_BYTES 18
TENDON_C_API TendonResult tendon_encode_net_character_state(const TendonNetCharacterState* state, uint8_t* out,
                                                            size_t capacity, size_t* written);
TENDON_C_API TendonResult tendon_decode_net_character_state(const uint8_t* bytes, size_t size,
                                                            TendonNetCharacterState* out);
TENDON_C_API TendonResult tendon_capture_net_character_state(const TendonWorld* world, TendonCharacterId character,
                                                             TendonNetCharacterState* out);
/* Makes the character do what the message says; *applied (may be NULL) is 0 for a stale
   message (an older generation, or an activation this character already ended), which
   changes nothing. */
TENDON_C_API TendonResult tendon_apply_net_character_state(TendonWorld* world, TendonCharacterId character,
                                                           const TendonNetCharacterState* state, int32_t* applied);

/* ---- assets: glTF / VRM files, the Jolt "Human" ragdoll and its animations ----
 * Each loaded asset is an opaque object the host owns (destroy it; NULL is a no-op),
 * independent of any world: loading touches no world and may run on any thread, one call
 * per object at a time. A refusal names the file, then the element or JSON path, and why
 * (tendon_last_error); a file that cannot be opened or read is TENDON_ERROR_IO. Text and
 * arrays an asset lends (names, settings whose pointers point into it) stay valid until it
 * is destroyed. */

/* A glTF 2.0 / VRM file as ports/gltf/gltf_import.h reads it: skeleton, skins, clips and
 * the VRM humanoid (ports::GltfAsset). */
typedef struct TendonGltfAsset TendonGltfAsset;
/* .glb and .vrm are binary glTF; anything else is .gltf JSON (buffers beside the file). */
TENDON_C_API TendonResult tendon_gltf_import(const char* path, TendonGltfAsset** out);
/* From memory: `name` names it in errors (may be NULL); binary when it starts with "glTF". */
TENDON_C_API TendonResult tendon_gltf_import_from_memory(const void* bytes, size_t size, const char* name,
                                                         TendonGltfAsset** out);
TENDON_C_API void tendon_gltf_asset_destroy(TendonGltfAsset* asset);
/* Every node in the scene is a bone, parents first. Out of range (or NULL): 0, NULL, -2. */
TENDON_C_API int32_t tendon_gltf_asset_bone_count(const TendonGltfAsset* asset);
TENDON_C_API const char* tendon_gltf_asset_bone_name(const TendonGltfAsset* asset, int32_t bone);
TENDON_C_API int32_t tendon_gltf_asset_bone_parent(const TendonGltfAsset* asset, int32_t bone); /* -1: a root */
/* Every bone's rest local transform: count must be the bone count. */
TENDON_C_API TendonResult tendon_gltf_asset_rest_local(const TendonGltfAsset* asset, TendonTransform* out, int32_t count);
/* Skins: joints (bones) and one column-major inverse bind matrix (16 floats) per joint. */
TENDON_C_API int32_t tendon_gltf_asset_skin_count(const TendonGltfAsset* asset);
TENDON_C_API int32_t tendon_gltf_asset_skin_joint_count(const TendonGltfAsset* asset, int32_t skin);
TENDON_C_API TendonResult tendon_gltf_asset_skin_joints(const TendonGltfAsset* asset, int32_t skin, int32_t* joints,
                                                        int32_t joint_count, float* inverse_binds,
                                                        int32_t inverse_bind_count /* floats: 16 per joint */);
/* Fills the skeleton (bone_count, bone_names, bone_parents, bone_rest_local) and, for a VRM,
 * the humanoid table of `settings` with arrays the asset lends; the other fields stay as
 * the host set them (start from tendon_character_settings_defaults). */
TENDON_C_API TendonResult tendon_gltf_asset_character_settings(const TendonGltfAsset* asset,
                                                               TendonCharacterSettings* settings);
/* Animation clips: names (NULL out of range), durations (s; 0 out of range). */
TENDON_C_API int32_t tendon_gltf_asset_clip_count(const TendonGltfAsset* asset);
TENDON_C_API const char* tendon_gltf_asset_clip_name(const TendonGltfAsset* asset, int32_t clip);
TENDON_C_API float tendon_gltf_asset_clip_duration(const TendonGltfAsset* asset, int32_t clip);
/* Poses `locals` (the bone count; what they hold is the start: bones without a channel keep
 * it) at `time` seconds of the clip, clamped to [0, duration] (ports::SampleClip). */
TENDON_C_API TendonResult tendon_gltf_sample_clip(const TendonGltfAsset* asset, int32_t clip, float time,
                                                  TendonTransform* locals, int32_t count);

/* The Jolt "Human" ragdoll (ports/jolt_human/jolt_human.h: jolt-human/ragdoll.json). */
typedef struct TendonJoltRagdoll TendonJoltRagdoll;
/* stabilized_masses (bool): each part's mass after Jolt's Stabilize instead of its shape's. */
TENDON_C_API TendonResult tendon_jolt_ragdoll_load(const char* path, int32_t stabilized_masses, TendonJoltRagdoll** out);
TENDON_C_API void tendon_jolt_ragdoll_destroy(TendonJoltRagdoll* ragdoll);
/* The ragdoll as settings whose arrays (parts, names, pairs) the loaded ragdoll lends: pass
 * it to tendon_build_ragdoll_archetype, or as TendonCharacterSettings::ragdoll. */
TENDON_C_API TendonResult tendon_jolt_ragdoll_settings(const TendonJoltRagdoll* ragdoll, TendonRagdollSettings* out);

/* A Jolt skeletal animation (animations/<name>.json): joints parents first, shared key times. */
typedef struct TendonJoltAnimation TendonJoltAnimation;
TENDON_C_API TendonResult tendon_jolt_animation_load(const char* path, TendonJoltAnimation** out);
TENDON_C_API void tendon_jolt_animation_destroy(TendonJoltAnimation* animation);
TENDON_C_API int32_t tendon_jolt_animation_joint_count(const TendonJoltAnimation* animation);
TENDON_C_API float tendon_jolt_animation_duration(const TendonJoltAnimation* animation); /* s */
/* Every joint's local transform at `time` (wrapped when looping, else clamped); in_place
 * (bool) holds the root's horizontal translation at its first key. count: the joint count. */
TENDON_C_API TendonResult tendon_jolt_animation_sample(const TendonJoltAnimation* animation, float time, int32_t in_place,
                                                       TendonTransform* out, int32_t count);
/* The pose at `time` as the ragdoll's parts see it (part j is joint j): each part's model
 * frame and its local rotation (a motor target); count: the ragdoll's part count. */
TENDON_C_API TendonResult tendon_jolt_animation_sample_parts(const TendonJoltRagdoll* ragdoll,
                                                             const TendonJoltAnimation* animation, float time,
                                                             TendonTransform* model, TendonQuat* local_rotations,
                                                             int32_t count);
/* Fills the skeleton of `settings` (bone_count, bone_names, bone_parents, and the first key
 * as bone_rest_local) with arrays the animation lends; other fields stay as set. */
TENDON_C_API TendonResult tendon_jolt_animation_character_settings(const TendonJoltAnimation* animation,
                                                                   TendonCharacterSettings* settings);
/* Every key as a frame of a clip (for TENDON_LIMITS_CLIPS), lent by the animation. */
TENDON_C_API TendonResult tendon_jolt_animation_clip(const TendonJoltAnimation* animation, TendonSampledClip* out);

/* ---- glTF / VRM avatars (ports/gltf/vrm_avatar.h) ---- */
typedef struct TendonVrmOptions {
  int32_t character; /* bool: build the ragdoll-able character when the file has a humanoid */
  float total_mass;
  TendonLimitSource limit_source;
  TendonInactiveBodies inactive_bodies; /* the character's parts while it stands (TendonCharacterSettings) */
} TendonVrmOptions;
TENDON_C_API void tendon_vrm_options_defaults(TendonVrmOptions* options);
/* Imports a .vrm / .gltf / .glb and builds its chains (and character) in the world. */
TENDON_C_API TendonResult tendon_load_vrm_kind(TendonWorld* world, const char* path,
                                               const TendonVrmOptions* options /* NULL: defaults */, TendonVrmKindId* out);
TENDON_C_API TendonResult tendon_load_vrm_kind_from_memory(TendonWorld* world, const void* bytes, size_t size,
                                                           const char* name, const TendonVrmOptions* options,
                                                           TendonVrmKindId* out);
TENDON_C_API int32_t tendon_vrm_kind_bone_count(const TendonWorld* world, TendonVrmKindId kind);
TENDON_C_API int32_t tendon_vrm_kind_joint_count(const TendonWorld* world, TendonVrmKindId kind);
/* The character archetype the kind built (its parts: tendon_get_character_part_info), 0
 * for a stale kind or one without a character (no humanoid, or options.character off). */
TENDON_C_API TendonCharacterArchetypeId tendon_vrm_kind_character_archetype(const TendonWorld* world,
                                                                            TendonVrmKindId kind);
/* An avatar on buffers Tendon owns (bone_count transforms each), at model_world. */
TENDON_C_API TendonResult tendon_bind_vrm_avatar(TendonWorld* world, TendonVrmKindId kind, TendonTransform model_world,
                                                 TendonVrmAvatarId* out);
TENDON_C_API TendonResult tendon_unbind_vrm_avatar(TendonWorld* world, TendonVrmAvatarId avatar);

/* The avatar's buffers: the host writes model_world and animated_local before Step, reads
 * output_local (and output_world) after. The pointers stay valid while it is bound. */
typedef struct TendonVrmAvatarBuffers {
  TendonTransform* model_world;
  TendonTransform* animated_local;
  const TendonTransform* output_local;
  const TendonTransform* output_world;
  int32_t bone_count;
  TendonCharacterId character; /* 0 without a humanoid */
} TendonVrmAvatarBuffers;
TENDON_C_API TendonResult tendon_vrm_avatar_buffers(TendonWorld* world, TendonVrmAvatarId avatar,
                                                    TendonVrmAvatarBuffers* out);
/* Forward kinematics into output_world (and every bone into the avatar's pose streams), for
 * an avatar without a character (call before Step; REENTRANT while a frame is in flight: the
 * frame's lanes read output_world). After Step, output_local, output_world and the streams all
 * hold the simulated pose: the chains write their bones' world frames in the Step. */
TENDON_C_API TendonResult tendon_vrm_avatar_update_world(TendonWorld* world, TendonVrmAvatarId avatar);

/* An avatar with the host's pose streams (tendon/pose_layout.h), indexed by the avatar's
 * bones (tendon_vrm_kind_skeleton's order): element_of_bone has one entry per bone (-1: not
 * written; NULL: bone k to element k), a SKINNING_MATRIX stream's inverse_bind 16 floats per
 * bone. A skin's palette: element_of_bone maps the skin's joints to their slots (-1 for every
 * other bone), inverse_bind holds each joint's inverse bind at its bone. A stream whose
 * model_world is NULL is written in the avatar's model space (its model_world buffer, read
 * every Step); point it at an identity transform for world space. Streams are copied at bind;
 * the arrays they write into must stay valid until the avatar is unbound. */
typedef struct TendonVrmAvatarBinding {
  TendonTransform model_world;
  const TendonPoseStream* pose_streams; /* may be NULL: at most 4; elements indexed by the avatar's bones (element_of_bone maps them) */
  int32_t pose_stream_count;
} TendonVrmAvatarBinding;
/* model_world the identity, no streams. */
TENDON_C_API void tendon_vrm_avatar_binding_defaults(TendonVrmAvatarBinding* binding);
TENDON_C_API TendonResult tendon_bind_vrm_avatar_with(TendonWorld* world, TendonVrmKindId kind,
                                                      const TendonVrmAvatarBinding* binding, TendonVrmAvatarId* out);

/* The kind's bones, to map them to the host's: names (UTF-8, as in the file), parents (-1 for
 * a root; parents come before children) and rest pose (local to the parent). The pointers
 * stay valid while the kind is loaded (until tendon_unload_vrm_kind or the world goes). */
typedef struct TendonVrmSkeleton {
  int32_t bone_count;
  const char* const* names;
  const int32_t* parents;
  const TendonTransform* rest_local;
} TendonVrmSkeleton;
TENDON_C_API TendonResult tendon_vrm_kind_skeleton(const TendonWorld* world, TendonVrmKindId kind, TendonVrmSkeleton* out);
/* The file's skins (0 for a stale kind). */
TENDON_C_API int32_t tendon_vrm_kind_skin_count(const TendonWorld* world, TendonVrmKindId kind);
/* One skin: per joint (palette slot) its avatar bone and inverse bind matrix. Valid while the
 * kind is loaded. OUT_OF_RANGE for a skin index outside [0, skin_count). */
typedef struct TendonVrmSkin {
  int32_t joint_count;
  const int32_t* joints;       /* avatar bone per skin joint */
  const float* inverse_binds;  /* 16 floats per joint, column-major */
} TendonVrmSkin;
TENDON_C_API TendonResult tendon_vrm_kind_skin(const TendonWorld* world, TendonVrmKindId kind, int32_t skin,
                                               TendonVrmSkin* out);
/* Frees a kind: its chain and character archetypes leave the world, and its id goes stale.
 * IN_USE while avatars of it are bound (unbind them first); REENTRANT while a frame is in
 * flight. tendon_world_destroy frees every kind. */
TENDON_C_API TendonResult tendon_unload_vrm_kind(TendonWorld* world, TendonVrmKindId kind);

#ifdef __cplusplus
}
#endif

#endif /* TENDON_TENDON_C_H_ */
