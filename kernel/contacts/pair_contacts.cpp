// kernel/contacts/pair_contacts.cpp: contacts between parts of different ragdolls.
//
// Müller et al. 2020, "Detailed Rigid Body Simulation with Extended Position Based
// Dynamics", section 3.5: collisions are detected once per time step and their depth is
// re-evaluated every substep. Here, once per frame, each part's sample spheres meet the
// other part's exact shape, and kContactsPerPair of those in reach (the deepest and those
// that span the contact: SelectContacts) become two points fixed in the bodies and a
// normal fixed in the shape's body. Every substep then measures the gap
// between the fixed points along the normal, which holds while they stay close (a resting
// or slowly sliding contact). A point that went deeper than kPairRemeasureDepth, or slid
// kPairRemeasureSlide along the surface, may be passing beside the shape (the tangent
// plane extends past it), so it is measured against the exact shape again.
#include "kernel/core/profile.h"
#include "kernel/contacts/pair_contacts.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>

#include "kernel/collide/part_distance.h"
#include "kernel/core/parallel.h"
#include "kernel/core/rotation.h"

namespace tendon::detail {

void PairContacts::Reserve(std::size_t pair_capacity) {
  contacts_.resize(pair_capacity * kContactsPerPair);
  contact_count_.resize(pair_capacity);
  contact_begin_.resize(pair_capacity);
  touching_.resize(pair_capacity);
  pushing_.resize(pair_capacity);
  overlap_.resize(pair_capacity);
  overlaps_.reserve(pair_capacity);
  // Zeroed once: a lane's rows past its pair's contacts keep a former batch's values,
  // which the kernel reads and never uses (pair_kernel_impl.h), so they are always set.
  lanes_.assign(static_cast<std::size_t>(WorkerSlots(settings_.tasks)), PairLanes{});
}

int32_t PairContacts::Find(std::span<PartPair> pairs, float frame_seconds) {
  auto find = [&](int32_t begin, int32_t end, uint32_t) {
    for (int32_t i = begin; i < end; ++i) FindOne(pairs[i], frame_seconds);
  };
  const auto pair_count = static_cast<int32_t>(pairs.size());
  ParallelFor(settings_.tasks, pair_count, 64, find, {settings_.profiler, "ragdolls.pairs/task", kRagdollColor});
  // Serial and in order, so which pairs stay (and so the islands and every result) does
  // not depend on the worker count. The kept pairs' contacts are packed to the front of
  // contacts_ (each pair's slots start at or after where its packed contacts go, so the
  // copy runs forward): the substeps then walk a few hundred kB instead of four slots for
  // every pair in reach.
  int32_t kept = 0;
  std::size_t packed = 0;
  overlaps_.clear();  // capacity reserved: no allocation
  for (int32_t i = 0; i < pair_count; ++i) {
    const int32_t found = pairs[i].found;
    assert(i == 0 || found > pairs[i - 1].found);  // the copy below runs forward
    const int32_t count = contact_count_[found];
    if (count == 0) continue;
    // A trigger's pairs are overlaps to report, never contacts to solve.
    const PairBody& ba = broad_.body(pairs[i].a);
    const PairBody& bb = broad_.body(pairs[i].b);
    const bool trigger_a = store_.groups[ba.group].trigger, trigger_b = store_.groups[bb.group].trigger;
    if (trigger_a || trigger_b) {
      if (overlap_[found] != 0 && !(trigger_a && trigger_b)) {
        const PairBody& t = trigger_a ? ba : bb;
        const PairBody& o = trigger_a ? bb : ba;
        overlaps_.push_back(TriggerOverlap{t.slot, o.slot, o.part});
      }
      continue;
    }
    const std::size_t from = static_cast<std::size_t>(found) * kContactsPerPair;
    for (int32_t k = 0; k < count && packed != from; ++k) contacts_[packed + k] = contacts_[from + k];
    contact_begin_[found] = static_cast<int32_t>(packed);
    packed += static_cast<std::size_t>(count);
    pairs[kept++] = pairs[i];
  }
  return kept;
}

void PairContacts::SolvePositions(float h) {
  const float max_push = settings_.max_push_speed * h;
  islands_.ForEachBatch(settings_.tasks,
                        [&](int32_t begin, int32_t count, uint32_t worker) { PositionsBatch(begin, count, max_push, worker); },
                        {settings_.profiler, "ragdolls.pair_positions/task", kRagdollColor});
}

void PairContacts::SolveVelocities(float h) {
  islands_.ForEachBatch(settings_.tasks,
                        [&](int32_t begin, int32_t count, uint32_t worker) { VelocitiesBatch(begin, count, h, worker); },
                        {settings_.profiler, "ragdolls.pair_velocities/task", kRagdollColor});
}

void PairContacts::SolveIslandPositions(int32_t island, float h, uint32_t worker) {
  const float max_push = settings_.max_push_speed * h;
  islands_.RunIsland(island, [&](int32_t begin, int32_t count, uint32_t w) { PositionsBatch(begin, count, max_push, w); },
                     worker);
}

void PairContacts::SolveIslandVelocities(int32_t island, float h, uint32_t worker) {
  islands_.RunIsland(island, [&](int32_t begin, int32_t count, uint32_t w) { VelocitiesBatch(begin, count, h, w); },
                     worker);
}

int32_t PairContacts::DrawnContacts(const PartPair& pair, DrawnContact* out) const {
  const PairBody& pa = broad_.body(pair.a);
  const PairBody& pb = broad_.body(pair.b);
  Vec3 xa, xb;
  Quat qa, qb;
  ReadPose(store_.groups[pa.group].ViewOfLane(pa.lane), store_.groups[pa.group].LaneInBlock(pa.lane), pa.part, &xa, &qa);
  ReadPose(store_.groups[pb.group].ViewOfLane(pb.lane), store_.groups[pb.group].LaneInBlock(pb.lane), pb.part, &xb, &qb);
  const int32_t count = contact_count_[pair.found];
  int32_t drawn = 0;
  for (int32_t k = 0; k < count; ++k) {
    const Contact& ct = contacts_[static_cast<std::size_t>(contact_begin_[pair.found]) + k];
    if (!(ct.lambda_sum > 0.0f)) continue;
    const Vec3 on_a = xa + Rotate(qa, ct.arm_a), on_b = xb + Rotate(qb, ct.arm_b);
    out[drawn++] = {(on_a + on_b) * 0.5f, NormalizeOr(Rotate(ct.normal_on_a ? qa : qb, ct.normal), Vec3{0, 1, 0})};
  }
  return drawn;
}

// Once per frame, after the broad phase: the contacts of a pair. Every sample sphere of
// each part against the other part's exact shape; a sample within the frame's reach of
// the shape (the speed of both over the frame, plus 1 cm) is a contact: the sphere's
// point nearest the shape and the shape's nearest surface point, each fixed in its body,
// and the shape's normal there. Of these, SelectContacts keeps kContactsPerPair.
void PairContacts::FindOne(const PartPair& pair, float frame_seconds) {
  const PairBody& pa = broad_.body(pair.a);
  const PairBody& pb = broad_.body(pair.b);
  RagdollGroup& ga = store_.groups[pa.group];
  RagdollGroup& gb = store_.groups[pb.group];
  Contact* contacts = &contacts_[static_cast<std::size_t>(pair.found) * kContactsPerPair];
  int32_t& count = contact_count_[pair.found];
  count = 0;
  overlap_[pair.found] = 0;
  // The pair's reach over the frame (the broad phase kept it only if their bounding
  // spheres get within it).
  const PairMotion& ma = broad_.motion(pair.a);
  const PairMotion& mb = broad_.motion(pair.b);
  const float margin = (Length(ma.v - mb.v) + ma.spin + mb.spin) * frame_seconds + 0.01f;
  {
    // Every sample sphere lies inside its part's shape, so no sample is nearer the other
    // shape than the two shapes are to each other, and they are at least their cores'
    // distance less both radii apart (CoreOf, made by the broad phase from these poses).
    // When that is past the frame's reach (most pairs in reach are: three in four in the
    // pile scene), no sample would be kept; 1 mm and 1 ppm of the coordinates' size are
    // left for rounding, so the samples' own test would have said the same. These pairs
    // read nothing from the blocks.
    const PartCore& core_a = broad_.core(pair.a);
    const PartCore& core_b = broad_.core(pair.b);
    const float spare = 1e-3f + 1e-6f * std::max({std::fabs(ma.x.x), std::fabs(ma.x.y), std::fabs(ma.x.z),
                                                  std::fabs(mb.x.x), std::fabs(mb.x.y), std::fabs(mb.x.z)});
    const float apart = std::sqrt(SegmentDistance2(core_a.a, core_a.b, core_b.a, core_b.b)) - core_a.radius - core_b.radius;
    if (apart > margin + spare) return;
  }
  const RigidBlockView va = ga.ViewOfLane(pa.lane), vb = gb.ViewOfLane(pb.lane);
  const int32_t la = ga.LaneInBlock(pa.lane), lb = gb.LaneInBlock(pb.lane);
  // The poses (each field a cache line of its own, SoA), for the pairs whose cores are in reach.
  BodyState a{}, b{};
  ReadPose(va, la, pa.part, &a.x, &a.q);
  ReadPose(vb, lb, pb.part, &b.x, &b.q);
  // The cores above were made from these poses: nothing moves a body between the broad
  // phase and Find (bits, so a poisoned pose that the frame will reset compares equal too).
  assert(std::memcmp(&a.x, &ma.x, sizeof(Vec3)) == 0 && std::memcmp(&b.x, &mb.x, sizeof(Vec3)) == 0);
  const RigidPartConstants& ca = ga.constants[pa.part];
  const RigidPartConstants& cb = gb.constants[pb.part];
  // Each shape's frame as the broad phase composed it from these same poses (bits).
  const Transform& a_shape = broad_.shape_frame(pair.a);
  const Transform& b_shape = broad_.shape_frame(pair.b);
  // Each body's rotation matrix, made once for both directions' samples and the anchors.
  const Rot3 ra = RotationOf(a.q), rb = RotationOf(b.q);
  // A penetration either part was placed in, or pushed out at the bounded speed last
  // frame, goes on being pushed out at that speed (see pair_kernel_impl.h).
  const float deferred = std::max(va.Part(kRbPairDeferLast, pa.part)[la], vb.Part(kRbPairDeferLast, pb.part)[lb]);
  // Every sample within reach is a candidate; the kContactsPerPair kept are chosen from
  // them below (SelectContacts).
  Candidate candidates[kPairCandidates];
  int32_t candidate_count = 0;
  // p is the body whose sample spheres are tested, q the body whose shape they meet.
  auto find = [&](const BodyState& p, const Rot3& rp, const RagdollGroup& gp, int32_t part_p, const BodyState& q,
                  const RigidPartConstants& cq, const RagdollGroup& gq, int32_t part_q, bool p_is_a) {
    const Transform& q_shape = p_is_a ? b_shape : a_shape;
    // Every sample goes straight into q's shape frame, s = m sample + t, one matrix where
    // world and back would take two quaternion turns; the world point and normal are made
    // only for the samples kept.
    const Rot3 rs = RotationOf(q_shape.rotation);
    const Rot3 m{ApplyInverse(rs, rp.x), ApplyInverse(rs, rp.y), ApplyInverse(rs, rp.z)};
    const Vec3 t = ApplyInverse(rs, p.x - q_shape.translation);
    const Vec3 q_origin = ApplyInverse(rs, q.x - q_shape.translation);  // q's body origin there
    for (const auto& smp : gp.pair_points[part_p]) {
      const Vec3 sample{smp[0], smp[1], smp[2]};
      const Vec3 s = t + Apply(m, sample);
      const float reach_q = cq.extent + smp[3] + margin;
      if (LengthSquared(s - q_origin) >= reach_q * reach_q) continue;
      Vec3 n_local;  // out of q, toward p
      const float dist = PartShapeDistanceNormalLocal(gq.shapes[part_q], s, &n_local);
      const float gap = dist - smp[3];
      if (!(gap < margin)) continue;
      // (Two parts' samples are at most 2 x 14, a box's: the bound is never reached, but a
      // later shape with more samples keeps the closest.)
      int32_t slot = candidate_count;
      if (candidate_count == kPairCandidates) {
        slot = 0;
        for (int32_t k = 1; k < kPairCandidates; ++k)
          if (candidates[k].gap > candidates[slot].gap) slot = k;
        if (!(gap < candidates[slot].gap)) continue;
      } else {
        ++candidate_count;
      }
      Candidate& cd = candidates[slot];
      cd.gap = gap;
      cd.dist = dist;
      cd.sample = sample;
      cd.radius = smp[3];
      cd.p_is_a = p_is_a;
      cd.centre = p.x + Apply(rp, sample);
      cd.n = Apply(rs, n_local);
      cd.point = cd.centre - cd.n * dist;
    }
  };
  find(a, ra, ga, pa.part, b, cb, gb, pb.part, true);
  find(b, rb, gb, pb.part, a, ca, ga, pa.part, false);
  int32_t chosen[kContactsPerPair];
  count = SelectContacts(candidates, candidate_count, chosen);
  float separation[kContactsPerPair];
  for (int32_t k = 0; k < count; ++k) {
    const Candidate& cd = candidates[chosen[k]];
    separation[k] = cd.gap;
    Contact& ct = contacts[k];
    ct.sample = cd.sample;
    ct.radius = cd.radius;
    ct.normal_on_a = !cd.p_is_a;
    ct.lambda = ct.pre = 0;
    ct.approach = ct.lambda_frame = 0;
    ct.deferred = deferred;
    if (cd.p_is_a) {
      Anchor(ct, a.x, ra, b.x, rb, cd.centre, cd.n, cd.dist);
    } else {
      Anchor(ct, b.x, rb, a.x, ra, cd.centre, cd.n, cd.dist);
    }
  }
  // Whether the shapes overlap now (a sample sphere inside the other shape): what a
  // trigger's pair reports.
  for (int32_t k = 0; k < count; ++k) overlap_[pair.found] |= separation[k] < 0.0f ? 1 : 0;
}

// Which kContactsPerPair of a pair's candidates are kept: the deepest, then the one
// farthest from it along the surface, then the farthest on either side of the line
// through those two (the points that span the most area, as Jolt's PruneContactPoints
// and Bullet's manifold reduction keep them), then the deepest of the rest. Keeping the
// nearest four instead lost a box's support: a crate resting on a box has five bottom
// samples (four corners and its face centre) and the box one more under it (its top
// face's centre), and the nearest four were the two centres and the two corners of the
// lower edge, so each frame it was held along one edge and the middle, tipped over that
// edge, and rocked from frame to frame, each swing larger, until it was thrown off.
// Points spread over the contact also carry the weight of a part on a curved shape or a
// capsule along its length; the deepest (of those whose normal agrees with the pair's,
// below) always stays, so nothing sinks where it is held.
int32_t PairContacts::SelectContacts(const Candidate* candidates, int32_t candidate_count, int32_t* chosen) {
  if (candidate_count == 0) return 0;
  // Where two parts' edges meet (two equal boxes face to face), a corner sample lies on the
  // other shape's edge, and its normal there is whichever face or edge is nearest by a hair
  // (sideways, or diagonal): such a contact holds no weight. So the points are chosen first
  // among the candidates whose normal is within about 35 degrees of the mean of all the
  // candidates' normals, and the others only fill the slots left.
  constexpr float kAligned = 0.82f;
  // (Each normal is out of the shape toward the sample: from b toward a where the sample is
  // a's, the other way where it is b's.)
  auto toward_a = [&](int32_t i) { return candidates[i].p_is_a ? candidates[i].n : -candidates[i].n; };
  Vec3 mean{};
  for (int32_t i = 0; i < candidate_count; ++i) mean = mean + toward_a(i);
  const float mean_length = Length(mean);
  bool used[kPairCandidates] = {};
  bool any_aligned = false;
  for (int32_t i = 0; i < candidate_count; ++i) {
    used[i] = !(Dot(toward_a(i), mean) > kAligned * mean_length);
    any_aligned = any_aligned || !used[i];
  }
  for (int32_t i = 0; i < candidate_count && !any_aligned; ++i) used[i] = false;
  int32_t count = 0;
  auto pick = [&](int32_t i) {
    chosen[count++] = i;
    used[i] = true;
  };
  auto deepest_unused = [&]() {
    int32_t best = -1;
    for (int32_t i = 0; i < candidate_count; ++i)
      if (!used[i] && (best < 0 || candidates[i].gap < candidates[best].gap)) best = i;
    return best;
  };
  const int32_t first = deepest_unused();
  pick(first);
  // Spread is measured in the plane of the deepest contact (its normal n); a point within
  // kSpread of another adds no support.
  constexpr float kSpread = 1e-3f;  // m
  const Vec3 origin = candidates[first].point, n = candidates[first].n;
  auto along_surface = [&](Vec3 d) { return d - n * Dot(d, n); };
  int32_t second = -1;
  float farthest = kSpread * kSpread;
  for (int32_t i = 0; i < candidate_count; ++i) {
    if (used[i]) continue;
    const float d2 = LengthSquared(along_surface(candidates[i].point - origin));
    if (d2 > farthest) farthest = d2, second = i;
  }
  if (second >= 0) {
    pick(second);
    const Vec3 edge = along_surface(candidates[second].point - origin);
    const Vec3 side = Cross(n, edge) * (1.0f / std::sqrt(farthest));  // across the line, unit length
    int32_t left = -1, right = -1;
    float most = kSpread, least = -kSpread;
    for (int32_t i = 0; i < candidate_count; ++i) {
      if (used[i]) continue;
      const float off = Dot(candidates[i].point - origin, side);
      if (off > most) most = off, left = i;
      if (off < least) least = off, right = i;
    }
    if (left >= 0) pick(left);
    if (right >= 0) pick(right);
  }
  // The rest: the deepest of the aligned ones, then of all.
  for (int32_t i = deepest_unused(); count < kContactsPerPair && i >= 0; i = deepest_unused()) pick(i);
  for (int32_t i = 0; i < candidate_count; ++i) used[i] = false;
  for (int32_t k = 0; k < count; ++k) used[chosen[k]] = true;
  for (int32_t i = deepest_unused(); count < kContactsPerPair && i >= 0; i = deepest_unused()) pick(i);
  return count;
}

// Fixes a contact's points and normal in its bodies from a measurement: the sample
// sphere of p (centre c) is `dist` from q's shape along n (out of q).
void PairContacts::Anchor(Contact& ct, Vec3 p_x, const Rot3& p_rot, Vec3 q_x, const Rot3& q_rot, Vec3 c, Vec3 n,
                          float dist) {
  const Vec3 on_p = ApplyInverse(p_rot, c - n * ct.radius - p_x), on_q = ApplyInverse(q_rot, c - n * dist - q_x);
  const Vec3 n_local = ApplyInverse(q_rot, n);
  ct.normal = ct.normal_on_a ? -n_local : n_local;
  ct.arm_a = ct.normal_on_a ? on_q : on_p;
  ct.arm_b = ct.normal_on_a ? on_p : on_q;
  ct.stick = Vec3{};
  ct.lambda_sum = 0;  // new points: friction holds them from when they next touch
}

// The position half of a colour's pairs, between the halves of a substep: each pair's
// contacts are re-measured along their normals from the poses; a pair where none
// penetrates or slid too far is done (its impulses 0), and the rest go into the worker's
// lanes, where the kernel (pair_kernel_impl.h) pushes each penetration apart and holds
// static friction, pair by pair side by side.
void PairContacts::PositionsBatch(int32_t begin, int32_t count, float max_push, uint32_t worker) {
  assert(count <= kPairLanes && worker < lanes_.size());  // Islands::ForEachBatch, WorkerSlots
  PairLanes& pl = lanes_[worker];
  int32_t pair_of_lane[kPairLanes];
  int32_t filled = 0;
  for (int32_t i = begin; i < begin + count; ++i) {
    const PartPair& pair = islands_.pair(i);
    const int32_t contact_count = contact_count_[pair.found];
    touching_[i] = 0;
    pushing_[i] = 0;
    Contact* contacts = &contacts_[static_cast<std::size_t>(contact_begin_[pair.found])];
    // Many pairs with contacts touch in no substep of the frame, or not in this one: their
    // poses alone say so, before anything else is read.
    const PairBody& pa = broad_.body(pair.a);
    const PairBody& pb = broad_.body(pair.b);
    RagdollGroup& ga = store_.groups[pa.group];
    RagdollGroup& gb = store_.groups[pb.group];
    const RigidBlockView va = ga.ViewOfLane(pa.lane), vb = gb.ViewOfLane(pb.lane);
    const int32_t la = ga.LaneInBlock(pa.lane), lb = gb.LaneInBlock(pb.lane);
    Vec3 xa, xb;
    Quat qa, qb;
    ReadPose(va, la, pa.part, &xa, &qa);
    ReadPose(vb, lb, pb.part, &xb, &qb);
    {
      const Rot3 ra = RotationOf(qa), rb = RotationOf(qb);
      bool active = false;
      for (int32_t k = 0; k < contact_count && !active; ++k) {
        const Contact& ct = contacts[k];
        const Vec3 n = Apply(ct.normal_on_a ? ra : rb, ct.normal);
        const Vec3 gap = (xa + Apply(ra, ct.arm_a)) - (xb + Apply(rb, ct.arm_b));
        const float depth = Dot(gap, n);
        active = depth < 0 || LengthSquared(gap - n * depth) > kPairRemeasureSlide * kPairRemeasureSlide;
      }
      if (!active) {
        for (int32_t k = 0; k < contact_count; ++k) contacts[k].lambda = 0;
        continue;
      }
    }
    const int32_t l = filled;
    pair_of_lane[filled++] = i;
    const RigidPartConstants& ca = ga.constants[pa.part];
    const RigidPartConstants& cb = gb.constants[pb.part];
    bool deferred = false;
    for (int32_t k = 0; k < contact_count; ++k) deferred = deferred || contacts[k].deferred > 0;
    // A sleeping or frozen ragdoll, or a kinematic part, is static in the pair.
    auto side = [&](int32_t s, const RigidBlockView& view, int32_t lane, int32_t part, Vec3 x, Quat q,
                    const RigidPartConstants& c, int32_t slot) {
      float(&rows)[kPairBodyFieldCount][kPairLanes] = pl.body[s];
      const bool fixed = store_.slots[slot].asleep || c.inv_mass == 0.0f;
      const float pose[7] = {x.x, x.y, x.z, q.x, q.y, q.z, q.w};
      for (int32_t f = 0; f < 7; ++f) rows[kPbXx + f][l] = pose[f];
      for (int32_t f = 0; f < 6; ++f) rows[kPbVx + f][l] = view.Part(kRbVx + f, part)[lane];
      if (deferred) {
        for (int32_t f = 0; f < 7; ++f) rows[kPbXPx + f][l] = view.Part(kRbXPx + f, part)[lane];
      }
      rows[kPbInvMass][l] = fixed ? 0.0f : c.inv_mass;
      for (int32_t f = 0; f < 3; ++f) rows[kPbInvInertia0 + f][l] = fixed ? 0.0f : c.inv_inertia[f];
    };
    side(0, va, la, pa.part, xa, qa, ca, pa.slot);
    side(1, vb, lb, pb.part, xb, qb, cb, pb.slot);
    pl.lane[kPlCount][l] = static_cast<float>(contact_count);
    pl.lane[kPlFriction][l] = std::sqrt(ca.friction * cb.friction);
    // What the pass reads of each contact (the sample sphere only when it is measured
    // again: Remeasure reads it here).
    for (int32_t k = 0; k < contact_count; ++k) {
      const Contact& ct = contacts[k];
      const float fields[] = {ct.normal.x, ct.normal.y, ct.normal.z, ct.arm_a.x,  ct.arm_a.y,
                              ct.arm_a.z,  ct.arm_b.x,  ct.arm_b.y,  ct.arm_b.z,  ct.normal_on_a ? 1.0f : 0.0f,
                              ct.stick.x,  ct.stick.y,  ct.stick.z,  ct.lambda_sum, ct.deferred};
      static_assert(sizeof(fields) / sizeof(float) == kPcDeferred + 1, "the rows up to kPcDeferred");
      for (int32_t f = 0; f <= kPcDeferred; ++f) pl.contact[k][f][l] = fields[f];
    }
  }
  if (filled == 0) return;
  const RemeasureContext context{this, pair_of_lane};
  PairSolveParams params;
  params.max_push = max_push;
  params.remeasure = &Remeasure;
  params.context = &context;
  settings_.kernels->pair_positions(pl, filled, params);
  for (int32_t l = 0; l < filled; ++l) {
    const int32_t i = pair_of_lane[l];
    const PartPair& pair = islands_.pair(i);
    const int32_t contact_count = contact_count_[pair.found];
    Contact* contacts = &contacts_[static_cast<std::size_t>(contact_begin_[pair.found])];
    for (int32_t k = 0; k < contact_count; ++k) {
      // (A contact measured again had its points and normal written by Remeasure.)
      Contact& ct = contacts[k];
      const float(&c)[kPairContactFieldCount][kPairLanes] = pl.contact[k];
      ct.stick = Vec3{c[kPcStickX][l], c[kPcStickY][l], c[kPcStickZ][l]};
      ct.lambda_sum = c[kPcLambdaSum][l];
      ct.deferred = c[kPcDeferred][l];
      ct.lambda = c[kPcLambda][l];
      if (ct.lambda > 0) {
        ct.pre = c[kPcPre][l];  // read only where it pushed
        // Contact events' bookkeeping (Impact): read by nothing in the solve.
        ct.approach = std::max(ct.approach, -ct.pre);
        ct.lambda_frame += ct.lambda;
      }
    }
    const bool moved = pl.lane[kPlMoved][l] > 0.5f;
    touching_[i] = moved ? 1 : 0;
    pushing_[i] = pl.lane[kPlPushing][l] > 0.5f ? 1 : 0;
    const PairBody* bodies[2] = {&broad_.body(pair.a), &broad_.body(pair.b)};
    for (int32_t s = 0; s < 2; ++s) {
      const float(&rows)[kPairBodyFieldCount][kPairLanes] = pl.body[s];
      if (!(rows[kPbInvMass][l] > 0.0f)) continue;  // fixed in the pair: never written
      RagdollGroup& g = store_.groups[bodies[s]->group];
      const RigidBlockView view = g.ViewOfLane(bodies[s]->lane);
      const int32_t lane = g.LaneInBlock(bodies[s]->lane);
      const int32_t part = bodies[s]->part;
      if (moved) {
        for (int32_t f = 0; f < 7; ++f) view.Part(kRbXx + f, part)[lane] = rows[kPbXx + f][l];
      }
      float& now = view.Part(kRbPairDeferNow, part)[lane];
      now = std::max(now, pl.lane[s == 0 ? kPlDeferNowA : kPlDeferNowB][l]);
    }
  }
}

// Contact k of a lane measured against its shape again (PairSolveParams::remeasure): the
// sample sphere's centre (which the kernel stored) against the other part's exact shape,
// and the contact's points and normal fixed in the bodies anew (Anchor).
void PairContacts::Remeasure(const void* context, PairLanes& pl, int32_t l, int32_t k) {
  const auto& ctx = *static_cast<const RemeasureContext*>(context);
  PairContacts& self = *ctx.self;
  const PartPair& pair = self.islands_.pair(ctx.pair_of_lane[l]);
  Contact& ct = self.contacts_[static_cast<std::size_t>(self.contact_begin_[pair.found]) + static_cast<std::size_t>(k)];
  auto body = [&](int32_t s) {
    const float(&rows)[kPairBodyFieldCount][kPairLanes] = pl.body[s];
    BodyState b{};
    b.x = Vec3{rows[kPbXx][l], rows[kPbXy][l], rows[kPbXz][l]};
    b.q = Quat{rows[kPbQx][l], rows[kPbQy][l], rows[kPbQz][l], rows[kPbQw][l]};
    return b;
  };
  // p is the body whose sample sphere it is, q the body whose shape it meets.
  const BodyState p = body(ct.normal_on_a ? 1 : 0), q = body(ct.normal_on_a ? 0 : 1);
  const PairBody& pq = self.broad_.body(ct.normal_on_a ? pair.a : pair.b);
  const RagdollGroup& gq = self.store_.groups[pq.group];
  const Rot3 p_rot = RotationOf(p.q);
  const Vec3 centre = p.x + Apply(p_rot, ct.sample);
  Vec3 nq;
  const float dist = PartShapeDistanceNormal(gq.shapes[pq.part], Compose(Transform{q.x, q.q, {1, 1, 1}}, gq.shape_in_body[pq.part]),
                                             centre, &nq);
  Anchor(ct, p.x, p_rot, q.x, RotationOf(q.q), centre, nq, dist);
  float(&c)[kPairContactFieldCount][kPairLanes] = pl.contact[k];
  const float fields[] = {ct.normal.x, ct.normal.y, ct.normal.z, ct.arm_a.x, ct.arm_a.y, ct.arm_a.z,
                          ct.arm_b.x,  ct.arm_b.y,  ct.arm_b.z};
  for (int32_t f = 0; f < 9; ++f) c[kPcNx + f][l] = fields[f];
  c[kPcStickX][l] = ct.stick.x, c[kPcStickY][l] = ct.stick.y, c[kPcStickZ][l] = ct.stick.z;
  c[kPcLambdaSum][l] = ct.lambda_sum;
  const Vec3 n = ct.normal_on_a ? -nq : nq;  // from b toward a
  pl.lane[kPlRemeasureNx][l] = n.x, pl.lane[kPlRemeasureNy][l] = n.y, pl.lane[kPlRemeasureNz][l] = n.z;
  pl.lane[kPlRemeasureDepth][l] = dist - ct.radius;
}

// The velocity half of a colour's pairs where a contact pushed this substep, after the
// kernel's velocities: gathered into the worker's lanes, solved by the kernel
// (pair_kernel_impl.h: restitution, dynamic friction, the push-out's speed cap, rolling
// resistance), and their velocities scattered back.
void PairContacts::VelocitiesBatch(int32_t begin, int32_t count, float h, uint32_t worker) {
  assert(count <= kPairLanes && worker < lanes_.size());  // Islands::ForEachBatch, WorkerSlots
  PairLanes& pl = lanes_[worker];
  int32_t pair_of_lane[kPairLanes];
  int32_t filled = 0;
  for (int32_t i = begin; i < begin + count; ++i) {
    if (touching_[i] == 0) continue;  // no contact pushed this substep
    const PartPair& pair = islands_.pair(i);
    const int32_t contact_count = contact_count_[pair.found];
    const Contact* contacts = &contacts_[static_cast<std::size_t>(contact_begin_[pair.found])];
    const int32_t l = filled;
    pair_of_lane[filled++] = i;
    const PairBody* bodies[2] = {&broad_.body(pair.a), &broad_.body(pair.b)};
    const RigidPartConstants* constants[2];
    for (int32_t s = 0; s < 2; ++s) {
      RagdollGroup& g = store_.groups[bodies[s]->group];
      const RigidBlockView view = g.ViewOfLane(bodies[s]->lane);
      const int32_t lane = g.LaneInBlock(bodies[s]->lane);
      const int32_t part = bodies[s]->part;
      const RigidPartConstants& c = g.constants[part];
      constants[s] = &c;
      float(&rows)[kPairBodyFieldCount][kPairLanes] = pl.body[s];
      for (int32_t f = 0; f < 10; ++f) rows[kPbQx + f][l] = view.Part(kRbQx + f, part)[lane];  // q, v, w
      // A sleeping or frozen ragdoll, or a kinematic part, is static in the pair.
      const bool fixed = store_.slots[bodies[s]->slot].asleep || c.inv_mass == 0.0f;
      rows[kPbInvMass][l] = fixed ? 0.0f : c.inv_mass;
      for (int32_t f = 0; f < 3; ++f) rows[kPbInvInertia0 + f][l] = fixed ? 0.0f : c.inv_inertia[f];
    }
    pl.lane[kPlCount][l] = static_cast<float>(contact_count);
    pl.lane[kPlFriction][l] = std::sqrt(constants[0]->friction * constants[1]->friction);
    pl.lane[kPlRestitution][l] = 0.5f * (constants[0]->restitution + constants[1]->restitution);
    pl.lane[kPlExtentA][l] = constants[0]->extent;
    pl.lane[kPlExtentB][l] = constants[1]->extent;
    pl.lane[kPlPushing][l] = pushing_[i] != 0 ? 1.0f : 0.0f;
    // A contact that did not push is skipped by its lambda alone (its other rows are not read).
    for (int32_t k = 0; k < contact_count; ++k) {
      const Contact& ct = contacts[k];
      pl.contact[k][kPcLambda][l] = ct.lambda;
      if (!(ct.lambda > 0)) continue;
      const float fields[10] = {ct.normal.x, ct.normal.y, ct.normal.z, ct.arm_a.x, ct.arm_a.y,
                                ct.arm_a.z,  ct.arm_b.x,  ct.arm_b.y,  ct.arm_b.z, ct.normal_on_a ? 1.0f : 0.0f};
      for (int32_t f = 0; f < 10; ++f) pl.contact[k][kPcNx + f][l] = fields[f];
      pl.contact[k][kPcDeferred][l] = ct.deferred;
      pl.contact[k][kPcPre][l] = ct.pre;
    }
  }
  if (filled == 0) return;
  PairSolveParams params;
  params.h = h;
  params.gravity_length = Length(settings_.gravity);
  params.max_push_speed = settings_.max_push_speed;
  params.angular_damping = settings_.contact_angular_damping;
  settings_.kernels->pair_velocities(pl, filled, params);
  for (int32_t l = 0; l < filled; ++l) {
    const PartPair& pair = islands_.pair(pair_of_lane[l]);
    const PairBody* bodies[2] = {&broad_.body(pair.a), &broad_.body(pair.b)};
    for (int32_t s = 0; s < 2; ++s) {
      const float(&rows)[kPairBodyFieldCount][kPairLanes] = pl.body[s];
      if (!(rows[kPbInvMass][l] > 0.0f)) continue;  // fixed in the pair: never written
      RagdollGroup& g = store_.groups[bodies[s]->group];
      const RigidBlockView view = g.ViewOfLane(bodies[s]->lane);
      const int32_t lane = g.LaneInBlock(bodies[s]->lane);
      for (int32_t f = 0; f < 6; ++f) view.Part(kRbVx + f, bodies[s]->part)[lane] = rows[kPbVx + f][l];
    }
  }
}

PairContacts::FrameImpact PairContacts::Impact(const PartPair& pair) const {
  FrameImpact out;
  const int32_t count = contact_count_[pair.found];
  const Contact* contacts = &contacts_[static_cast<std::size_t>(contact_begin_[pair.found])];
  int32_t most = 0;
  for (int32_t k = 0; k < count; ++k) {
    const Contact& ct = contacts[k];
    if (!(ct.lambda_frame > 0)) continue;
    if (!out.touched || ct.lambda_frame > contacts[most].lambda_frame) most = k;
    out.touched = true;
    out.approach = std::max(out.approach, ct.approach);
    out.lambda += ct.lambda_frame;
  }
  if (count == 0) return out;
  const PairBody& pa = broad_.body(pair.a);
  const PairBody& pb = broad_.body(pair.b);
  RagdollGroup& ga = store_.groups[pa.group];
  RagdollGroup& gb = store_.groups[pb.group];
  Vec3 xa, xb;
  Quat qa, qb;
  ReadPose(ga.ViewOfLane(pa.lane), ga.LaneInBlock(pa.lane), pa.part, &xa, &qa);
  ReadPose(gb.ViewOfLane(pb.lane), gb.LaneInBlock(pb.lane), pb.part, &xb, &qb);
  const Rot3 ra = RotationOf(qa), rb = RotationOf(qb);
  const Contact& ct = contacts[most];
  out.point = xa + Apply(ra, ct.arm_a);
  out.normal = Apply(ct.normal_on_a ? ra : rb, ct.normal);
  return out;
}

}  // namespace tendon::detail
