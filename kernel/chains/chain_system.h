// kernel/chains/chain_system.h: verlet chains (hair, capes, tails): their archetypes, their
// lanes by topology, and the five chain phases of a frame.
//
// What it does: BuildArchetype validates settings once and files the archetype under its
// topology (parents and collider kinds); chains of one topology share blocks of kBlockLanes
// lanes, whatever their archetype. Bind sizes everything a chain will touch. A frame runs
//   Gather     per bound chain (chunks): the root's host frame, its squared camera distance
//   Budget     serial: eligibility (distance or the host's predicate), the nearest
//              max_chains win (ties by slot), then lanes are released and acquired so
//              that each topology's awake chains stay packed at the front of its blocks
//   Pose       per selected chain (chunks): its host input read and checked once, its
//              colliders on host frames (written into each of its lanes), the teleport
//              guard and whether it snaps, the nearest host bodies it collides with
//              (host_body_mask: written into its lane's host-body collider slots); then
//              per block: the animated pose in lanes,
//              colliders on the chain's own nodes, snaps
// A chain takes one lane per strand (ChainArchetype::strands: a kVrm chain whose roots'
// subtrees share one shape), so a lone VRM avatar's hair fills a block instead of padding
// 7 lanes of 8; every other chain takes one lane.
//   Solve      per block: the SIMD kernel's substeps
//   Writeback  per block: local rotations in lanes, scattered into each chain's host
//              buffer (through a flat list of the block's host bones, which the budget
//              rebuilds when lanes or bindings change); a lane that went non-finite is
//              reset and counted
// What it does NOT do: keep time (the World's fixed clock gives substeps and dt), sample
// wind (the World does, once per frame), or know of ragdolls and characters.
// Threading: the phases split their work over the host's task hooks (ParallelFor); every
// item writes only its own block and chains, and counts are summed serially in item
// order, so results are the same for any worker count. Everything else, and every call
// between phases, is the World's thread only.
// Memory: archetypes, slabs of blocks, per-chain buffers and the frame's scratch are sized
// at build and bind time (and by SetMaxChains); the phases allocate nothing.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kernel/chains/chain_archetype.h"
#include "kernel/chains/chain_block.h"
#include "kernel/core/frame_counters.h"
#include "kernel/core/handle_table.h"
#include "kernel/chains/chain_host_pick.h"
#include "kernel/core/host_shapes.h"
#include "kernel/core/pose_streams.h"
#include "kernel/core/snapshot_io.h"
#include "tendon/profiler_hooks.h"
#include "tendon/chain_settings.h"
#include "tendon/errors.h"
#include "tendon/ids.h"
#include "tendon/isa.h"
#include "tendon/math.h"
#include "tendon/stats.h"
#include "tendon/task_hooks.h"

namespace tendon::detail {

struct ChainKernels;

// What a chain system is built with (from WorldSettings).
struct ChainSystemSettings {
  TaskHooks tasks{};
  const ChainKernels* kernels = nullptr;
  int32_t max_chains = 0;
  float max_distance = 0;  // m; infinity: no distance culling
  Vec3 gravity{};
  float teleport_distance = 0;       // m
  float teleport_angle_degrees = 0;  // infinity: never by angle
};

class ChainSystem {
 public:
  explicit ChainSystem(const ChainSystemSettings& settings);
  ~ChainSystem();

  // ---- build and bind (World's thread; these allocate) ----
  Result<ChainArchetypeId> BuildArchetype(const ChainArchetypeSettings& settings);
  int32_t BoneCount(ChainArchetypeId id) const;
  Result<ChainId> Bind(const ChainBinding& binding);
  // Moves a bound chain to new host buffers (same archetype), keeping its simulated state.
  Error Rebind(ChainId id, const ChainBinding& binding);
  // Forgets an archetype; kInUse while chains of it are bound.
  Error RemoveArchetype(ChainArchetypeId id);
  // Writes the animated locals back into the output and frees the slot.
  Error Unbind(ChainId id);
  // Unbinds every chain (each output gets its animated locals back); returns how many.
  int32_t UnbindAll();
  bool IsValid(ChainId id) const { return Find(id) != nullptr; }
  void SetMaxChains(int32_t max_chains);
  // A cap for the coming frames under max_chains (the World's millisecond budget);
  // INT32_MAX: none. Lanes are reserved for max_chains, so it never allocates.
  void SetFrameChainCap(int32_t cap) { frame_chain_cap_ = std::max(cap, 0); }
  // The host bodies' world shapes for the coming frame (kernel/core/host_shapes.h): chains
  // whose archetype has a host_body_mask collide with the nearest matching ones. The span
  // must stay valid until the frame's pose phase is over (the World's own vector). Builds
  // the frame's broad phase over them (chain_host_pick.h): no allocation up to the count
  // given to ReserveHostShapes.
  // A frame in which no awake lane collides with host bodies builds an empty one (no sort
  // of every host shape). (chain_pose.cpp)
  void SetHostShapes(std::span<const HostShape> shapes);
  // Room for `count` host shapes in the broad phase (World::AddHostBody; allocates).
  void ReserveHostShapes(std::size_t count) { host_broad_phase_.Reserve(count); }
  // The World's profiler hooks, or null (kernel/core/profile.h): names the phases' tasks.
  void SetProfiler(const ProfilerHooks* profiler) { profiler_ = profiler; }

  // ---- queries ----
  bool IsSimulated(ChainId id) const;
  Error GetNodePositions(ChainId id, std::span<Vec3> out) const;
  int32_t BoundCount() const { return static_cast<int32_t>(live_chains_.size()); }
  int32_t SimulatedBlocks() const { return work_count_; }
  // Debug validation (kernel/core/host_buffers.h): every bound chain's host buffers, or
  // the one of `only` when it is live.
  void CheckHostBuffers(ChainId only = ChainId{}) const;
  // Feeds every simulated chain's positions and written outputs, in slot order.
  void HashState(StateHasher& hasher) const;
  // The debug draw's view of one bound chain (World::DrawDebug, tendon/debug_draw.h):
  // nodes in lane order with their parents (-1: a root), and, for a chain that simulated,
  // its colliders' world shapes this frame as its lanes hold them (ColliderKind; a and b as
  // the kC* fields: a plane's b is its unit normal). A chain that did not simulate shows
  // its animated pose and no colliders.
  struct DrawnCollider {
    uint8_t kind = 0;
    Vec3 a{}, b{};
    float radius = 0;
  };
  struct DrawnChain {
    bool simulated = false;
    std::span<const Vec3> nodes;
    std::span<const int32_t> parent;
    std::span<const DrawnCollider> colliders;
  };
  // Calls visit(chain, context) for every bound chain whose pose is finite, in slot order.
  // Read-only; allocates nothing (stack scratch of kMaxChainNodes nodes).
  void VisitForDraw(void (*visit)(const DrawnChain& chain, void* context), void* context) const;

  // ---- saved states (chain_snapshot.cpp; tendon/snapshot.h) ----
  // Every bound chain's record in slot order (its lanes' rows with the position slots in
  // a fixed order, its last good input, the teleport guard's previous root, its outputs),
  // then the budget's memory. Restore: called twice over the same bytes, a checking
  // pass then the writing one (r.apply()), between frames; the writing pass first gives
  // back the lanes of chains asleep in the saved state, then a chain awake in it takes
  // lanes (reserved: no allocation).
  void SaveState(SnapshotWriter& w) const;
  void RestoreState(SnapshotReader& r);
  void SaveInstance(ChainId id, SnapshotWriter& w) const;
  void RestoreInstance(ChainId id, SnapshotReader& r);

  // ---- the frame's phases, in this order ----
  void Gather(Vec3 camera, const SimulatePredicate& predicate);
  // Writes culled_by_distance, culled_by_budget, snapped_wake (=), simulated_chains,
  // sleeping_chains, chain_blocks, lanes_used and lane_occupancy, and adds the chains whose
  // root frame was not finite to snapped_bad_input; stats.frame marks the chains it selects.
  // It also splits the selected chains and their blocks into two passes: passes()[0] the
  // chains that do not depend on the ragdoll phase, passes()[1] those that do (see
  // MarkDependents). Blocks are independent of each other, so running the passes in
  // either order, or side by side, gives the same result.
  void Budget(const SimulatePredicate& predicate, FrameStats& stats);
  // The frame's solve parameters: substeps of dt for kTendon topologies; one step of
  // frame_dt (when > 0) for kVrm ones. Serial, after Budget.
  void BeginFrame(int32_t substeps, float dt, Vec3 wind, float frame_dt);
  // Pose, Solve and Writeback run one pass each; the two passes may run concurrently (they
  // touch disjoint chains, blocks and counters; per-worker scratch is per thread).
  struct ChainPass {
    int32_t first_selected = 0, end_selected = 0;  // in the budget's selection
    int32_t first_work = 0, end_work = 0;          // blocks
    int32_t first_read_chunk = 0;                  // its read counters
  };
  const ChainPass& Pass(int32_t index) const { return passes_[index]; }
  void Pose(const ChainPass& pass);
  void Solve(const ChainPass& pass);
  // alpha: render interpolation between the last two substeps (1: the last one's).
  void Writeback(const ChainPass& pass, float alpha);
  // Serial, after both passes: records the solve's swap of the position slots.
  void EndFrame();
  // Rebuilds the per-block lists (the writeback's scatter, the pose inputs) of every group
  // whose lanes or bindings changed. The budget calls it; a caller that runs Writeback
  // without a budget since binds changed (WorldAccess::WritebackOnly) calls it first.
  // Serial; allocates nothing.
  void RefreshLists();
  // Marks the chains one of whose host buffers `overlaps` says a ragdoll or character
  // reads or writes. Serial, between frames (the World calls it after binds change).
  void MarkDependents(bool (*overlaps)(const void* data, std::size_t bytes, const void* context), const void* context);
  // Adds the pose and writeback items' counters (bad input, resets, teleports).
  void AddCounters(FrameStats& stats) const;

 private:
  struct Group;
  struct ArchetypeSlot;
  struct Slot;
  struct WorkItem {
    int32_t group = 0;
    int32_t block = 0;
  };

  void SaveSlot(uint32_t index, SnapshotWriter& w) const;
  void RestoreSlot(uint32_t index, SnapshotReader& r, bool same_slot = true);
  uint64_t ArchetypeFingerprint(int32_t archetype) const;
  Slot* Find(ChainId id);
  const Slot* Find(ChainId id) const;
  Error CheckBinding(const ChainBinding& b, const ArchetypeSlot& arch, Transform** identity) const;
  Error CheckFiniteAtBind(const ChainBinding& b, const ChainArchetype& a) const;
  int32_t NewGroup(const ChainArchetype& a);
  void ReserveGroup(Group& g);
  void ReleaseLane(int32_t slot_index);
  void AcquireLane(int32_t slot_index);
  bool ReadLaneInput(Slot& slot, WorkCounters& counters);
  void ReadChain(Slot& slot, WorkCounters& counters);
  void WriteHostBodies(const Slot& slot, const ChainArchetype& a);
  void LaneRareWork(Group& g, const ChainBlockView& v, int32_t l, const Slot& slot, int32_t strand);
  void ResetLane(const ChainBlockView& v, int32_t l, Slot& slot, int32_t strand);
  void BuildLaneLists(Group& g);
  void MarkLaneListsStale();  // every group's (chain slots moved, or a chain's host buffers changed)
  void SetHostMap(Slot& slot, const ChainArchetype& a, std::span<const int32_t> bone_map) const;
  void PartitionPasses();
  void FinishSelection(int32_t keep, bool rebuild_work, FrameStats& stats);
  bool Flipped(const Group& g) const;
  // Pose streams: checked and put in lane order at bind; written from a lane's world
  // matrices (the writeback), or from locals composed here (a reset, an unbind).
  Error BindStreams(const ChainBinding& b, const ChainArchetype& a, std::vector<BoundPoseStream>* out) const;
  void SetStreams(Slot& slot, std::vector<BoundPoseStream> streams);
  void EmitLaneStreams(const Slot& slot, int32_t strand, int32_t base, const float* world_rows,
                       const float* world_frames, int32_t l);
  void EmitStreams(const Slot& slot, const ChainArchetype& a, int32_t begin, int32_t end, const Transform* locals,
                   const Transform& root_parent);

  TaskHooks tasks_;
  const ProfilerHooks* profiler_ = nullptr;
  HostBroadPhase host_broad_phase_;  // this frame's host shapes (SetHostShapes)
  const ChainKernels* kernels_;
  int32_t max_chains_;
  int32_t frame_chain_cap_ = INT32_MAX;
  int32_t MaxChains() const { return std::min(max_chains_, frame_chain_cap_); }
  float max_distance_;
  Vec3 gravity_;
  float teleport_distance2_;
  float teleport_cos_half_angle_;

  std::vector<ArchetypeSlot> archetypes_;
  std::map<ChainTopologyKey, int32_t> group_by_topology_;
  std::vector<Group> groups_;
  HandleTable<ChainId> handles_;
  std::vector<Slot> chains_;  // by ChainId::index
  std::unordered_map<const void*, int32_t> chain_by_output_;
  // Dense, by live index (swap-removed on unbind): what the per-bound-chain passes touch.
  std::vector<int32_t> live_chains_;                // slot
  std::vector<const Transform*> live_root_parent_;  // host frame the roots hang from
  std::vector<float> live_distance2_;               // this frame's squared camera distance
  float last_cutoff2_ = -1.0f;  // the budget's farthest selected distance^2, last frame
  float gather_cutoff2_ = 0.0f;
  std::vector<int32_t> chunk_eligible_, chunk_kept_, chunk_bad_;  // per gather chunk

  // Frame scratch, sized at bind time.
  std::vector<std::pair<float, int32_t>> candidates_;
  std::vector<WorkItem> work_;
  std::vector<AlignedFloats> writeback_scratch_;  // per worker (see WrittenLocalRotation)
  std::vector<AlignedFloats> world_matrix_scratch_;  // per worker (see WrittenWorldMatrix)
  std::vector<AlignedFloats> world_frame_scratch_;   // per worker (see WrittenWorldFrame)
  std::vector<WorkItem> work_partitioned_;  // scratch for PartitionPasses
  std::vector<uint8_t> work_late_;          // per work item: in the second pass
  ChainPass passes_[2];
  bool any_dependent_ = false;
  ChainSolveParams solve_params_{}, vrm_params_{};
  bool frame_open_ = false;  // between BeginFrame and EndFrame: the solve's swap is pending
  int32_t work_count_ = 0;
  std::vector<WorkCounters> work_counters_;
  int32_t selected_count_ = 0;  // the budget's selection: candidates_[0, selected_count_)
  int32_t awake_chains_ = 0;    // chains holding lanes (AcquireLane / ReleaseLane)
  // Lane layout changes (AcquireLane, ReleaseLane, NewGroup) and the count when work_ was
  // last built: while they agree, work_ and the lanes in use stand (Budget's steady state).
  uint64_t lane_epoch_ = 0;
  uint64_t work_epoch_ = UINT64_MAX;
  int32_t work_lanes_ = 0;  // lanes in use when work_ was built
  std::vector<WorkCounters> read_counters_;  // per chunk of the pose phase's per-chain read
  int32_t read_chunk_count_ = 0;
  // kVrm chains bound since the last Budget: those it does not select
  // forget their bind pose, so a chain woken later starts from its pose then, not from a
  // stale bind pose.
  std::vector<ChainId> fresh_vrm_chains_;
  // A whole-World restore's count of chains awake in the saved state (chain_snapshot.cpp):
  // at most max_chains, which the groups' lanes are reserved for.
  int32_t restore_awake_ = 0;
};

}  // namespace tendon::detail
