// kernel/contacts/pair_contacts.h: contacts between parts of different ragdolls: found
// once per frame, solved inside every substep.
//
// What it does: Find, once per frame after the broad phase, gives each pair up to
// kContactsPerPair contacts and keeps only the pairs with one for the islands and the
// substeps (most pairs in reach have none: three in four in Jolt's pile scene, and those
// end at their shapes' cores, BroadPhase::core, without reading the blocks). The
// contacts: every sample sphere of each part against the other part's exact shape,
// within the frame's reach (both parts' speed over the frame, plus 1 cm), each kept as
// two points fixed in the bodies and a normal. Inside each substep, after the kernel's
// positions, SolvePositions re-measures each contact along its normal and pushes a
// penetration apart (XPBD positional correction with both generalised inverse masses),
// then static friction holds the points where they first touched this frame while the
// tangential impulse stays within Coulomb's cone over the frame's normal impulses. After
// the kernel's velocities, SolveVelocities applies restitution (none for slow
// approaches), dynamic friction and rolling resistance at the contacts that pushed.
// A sleeping or frozen ragdoll, or a kinematic part, is static in its pairs.
// What it does NOT do: decide which parts may touch (BroadPhase) or in what order pairs
// run (Islands), or meet the static world (the rigid kernels do).
// The solves run a colour's pairs side by side (Islands::ForEachBatch): each pair's
// contacts are checked from the poses (a pair where none touches is done), the rest are
// gathered into lanes (PairLanes), solved by the World's rigid kernel (pair_positions,
// pair_velocities: compiled per instruction set, each with its scalar reference), and
// scattered back.
// Threading: Find is a parallel-for over pairs (each writes its own contacts), then a
// serial pass that keeps and packs the pairs with a contact; the solves run through
// Islands::ForEachBatch, so no two concurrent pairs share a body, each worker in its own
// PairLanes; or island by island (SolveIsland*) inside RagdollSystem's domain tasks,
// whose blocks and islands share no body (RagdollDomains, kernel/ragdolls/ragdoll_domains.h).
// Memory: sized by Reserve at bind time (with a PairLanes, 8 kB, per worker slot); nothing
// here allocates in Step.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "kernel/contacts/broad_phase.h"
#include "kernel/contacts/islands.h"
#include "kernel/core/rotation.h"
#include "kernel/rigid/ragdoll_store.h"
#include "tendon/profiler_hooks.h"
#include "tendon/task_hooks.h"

namespace tendon::detail {

// A trigger body's part overlapping a ragdoll's part this frame (by ragdoll slot).
struct TriggerOverlap {
  int32_t trigger_slot = -1;
  int32_t slot = -1, part = -1;
};

struct PairContactSettings {
  TaskHooks tasks{};
  const ProfilerHooks* profiler = nullptr;  // the World's, or null (profile.h)
  Vec3 gravity{};                       // restitution applies only above 2 g h of approach
  float contact_angular_damping = 0;    // 1/s: rolling resistance between touching parts
  float max_push_speed = INFINITY;      // m/s: how fast a penetration a substep starts with is taken out
  const RigidKernels* kernels = nullptr;  // the World's: pair_positions and pair_velocities solve a batch in lanes
};

class PairContacts {
 public:
  PairContacts(const PairContactSettings& settings, RagdollStore& store, const BroadPhase& broad, const Islands& islands)
      : settings_(settings), store_(store), broad_(broad), islands_(islands) {}

  // Room for `pair_capacity` pairs in reach, and one PairLanes per worker slot.
  void Reserve(std::size_t pair_capacity);
  void SetProfiler(const ProfilerHooks* profiler) { settings_.profiler = profiler; }
  // The contacts of the broad phase's pairs (each kept at its PartPair::found, which must
  // ascend through `pairs`, as the broad phase numbers them). Then the pairs with a
  // contact are moved to the front of `pairs`, in their order (the rest of the span is
  // stale), and their count is returned: the islands order that prefix, and the solves
  // run over Islands::pair.
  int32_t Find(std::span<PartPair> pairs, float frame_seconds);
  // The position half, between the kernel's positions and velocities of a substep; h is
  // the substep's length (a penetration the substep started with is taken out at most
  // max_push_speed x h deep).
  void SolvePositions(float h);
  // The velocity half, after the kernel's velocities; h is the substep's length.
  void SolveVelocities(float h);
  // The two halves for island k alone (Islands::RunIsland), on the calling thread as
  // `worker`: a schedule that keeps each island with its bodies' blocks runs them.
  void SolveIslandPositions(int32_t island, float h, uint32_t worker);
  void SolveIslandVelocities(int32_t island, float h, uint32_t worker);
  // Find's overlaps of trigger bodies (RagdollGroup::trigger) with parts, in pair order;
  // their pairs are not kept for the solve.
  std::span<const TriggerOverlap> TriggerOverlaps() const { return overlaps_; }
  void ClearTriggerOverlaps() { overlaps_.clear(); }

  // The debug draw (World::DrawDebug): the contacts the last Find kept for `pair` (one of
  // the pairs it kept) that pushed over the frame (a normal impulse since they touched),
  // in world space at the bodies' poses now: the midpoint of the two bodies' points and the
  // unit normal from part b toward part a. Writes up to kContactsPerPair; returns how many.
  struct DrawnContact {
    Vec3 point, normal;
  };
  int32_t DrawnContacts(const PartPair& pair, DrawnContact* out) const;

  // Contact events (kernel/ragdolls/ragdoll_events.cpp): what a kept pair's contacts did
  // over the frame, after its substeps. touched: a contact pushed in some substep.
  // approach: the fastest approach along a normal before the solve (m/s); lambda: the sum
  // of the normal positional impulses (kg m; / h is N s); point and normal (from b's part
  // toward a's) in the world, of the contact that pushed the most, else the first.
  struct FrameImpact {
    bool touched = false;
    float approach = 0, lambda = 0;
    Vec3 point{}, normal{};
  };
  FrameImpact Impact(const PartPair& pair) const;

 private:
  // A contact of a pair, found once per frame and re-measured every substep from points
  // fixed in the two bodies (Müller et al. 2020, section 3.5: collisions are detected once
  // per time step and their depth re-evaluated per substep), so the substeps never run the
  // shape distance.
  struct Contact {
    Vec3 normal;        // from part b toward part a, in the frame of the body whose shape
                        // gave it (normal_on_a: a's, else b's), so it turns with that body
    Vec3 arm_a, arm_b;  // contact point relative to each centre, in each body's frame
    float lambda;       // normal positional impulse this substep (0: apart)
    float pre;          // relative normal speed before the position solve
    bool normal_on_a;   // the shape is a's, the sample sphere b's
    Vec3 sample;        // the sample sphere's centre in its body's frame, and its radius
    float radius;
    // Static friction holds the contact where it first touched this frame: `stick` is the
    // points' offset along the surface then, `lambda_sum` the normal impulse since.
    Vec3 stick;
    float lambda_sum;
    // Bounded depenetration: the penetration this contact left in on purpose at the last
    // substep (m), from the parts' kRbPairDeferLast at the frame's start (0: none, the
    // contact is solved whole).
    float deferred;
    // Contact events (FrameImpact): over the frame's substeps where it pushed, the fastest
    // approach before the solve (m/s, >= 0) and the sum of its normal impulses (kg m).
    float approach;
    float lambda_frame;
  };
  // A sample within the frame's reach of the other part's shape, from which Find chooses
  // the contacts (SelectContacts): p is the body whose sample sphere it is, q the other.
  struct Candidate {
    float gap;     // sphere surface to q's shape (< 0: in it)
    float dist;    // the sample's centre to q's shape
    Vec3 sample;   // in p's body frame, and its radius
    float radius;
    bool p_is_a;
    Vec3 centre, n, point;  // world: the sample's centre, q's normal out, q's nearest point
  };
  // Two boxes' samples (ForEachShapeSample: 8 corners and 6 face centres each).
  static constexpr int32_t kPairCandidates = 28;
  // The contacts kept of `candidate_count` candidates, as indices into `chosen`
  // (kContactsPerPair of room); returns how many.
  static int32_t SelectContacts(const Candidate* candidates, int32_t candidate_count, int32_t* chosen);
  struct RemeasureContext {
    PairContacts* self;
    const int32_t* pair_of_lane;  // the batch's ordered pair index per lane
  };

  void FindOne(const PartPair& pair, float frame_seconds);
  // Fixes a contact's points and normal in its bodies from a measurement: the sample
  // sphere of p (centre c) is `dist` from q's shape along n (out of q). A body is its
  // position and its rotation's matrix (RotationOf its orientation).
  static void Anchor(Contact& ct, Vec3 p_x, const Rot3& p_rot, Vec3 q_x, const Rot3& q_rot, Vec3 c, Vec3 n, float dist);
  // The position half of `count` consecutive ordered pairs of one colour: each one's
  // contacts checked from the poses alone (most touch in no substep), the rest gathered
  // into the worker's lanes, solved by the kernel, and scattered back.
  void PositionsBatch(int32_t begin, int32_t count, float max_push, uint32_t worker);
  // PairSolveParams::remeasure: contact k of a lane against its shape again.
  static void Remeasure(const void* context, PairLanes& lanes, int32_t lane, int32_t k);
  // The velocity half of the batch's pairs where a contact pushed, in lanes.
  void VelocitiesBatch(int32_t begin, int32_t count, float h, uint32_t worker);

  PairContactSettings settings_;
  RagdollStore& store_;
  const BroadPhase& broad_;
  const Islands& islands_;
  // Find's kContactsPerPair slots per pair at the pair's PartPair::found (its index in the
  // broad phase's list) and how many it used; then the kept pairs' contacts packed in
  // broad-phase order, each pair's from contact_begin_[found].
  std::vector<Contact> contacts_;
  std::vector<int32_t> contact_count_, contact_begin_;
  std::vector<uint8_t> touching_;       // per kept pair: 1 when a contact pushed this substep
  std::vector<uint8_t> pushing_;        // per kept pair: 1 when a contact was pushed out at the bounded speed
  std::vector<uint8_t> overlap_;        // per pair found: 1 when its shapes overlap now (FindOne)
  std::vector<TriggerOverlap> overlaps_;  // Find's trigger overlaps (capacity: the pair capacity)
  std::vector<PairLanes> lanes_;        // per worker slot: a batch's pairs in lanes
};

}  // namespace tendon::detail
