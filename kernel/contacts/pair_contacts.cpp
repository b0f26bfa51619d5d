// kernel/contacts/pair_contacts.cpp: contacts between parts of different ragdolls.
//
// Müller et al. 2020, "Detailed Rigid Body Simulation with Extended Position Based
// Dynamics", section 3.5: collisions are detected once per time step and their depth is
// re-evaluated every substep. Here, once per frame, each part's sample spheres meet the
// other part's exact shape, and the kContactsPerPair closest become two points fixed in
// the bodies and a normal fixed in the shape's body. Every substep then measures the gap
// between the fixed points along the normal, which holds while they stay close (a resting
// or slowly sliding contact). A point that went deeper than kPairRemeasureDepth, or slid
// kPairRemeasureSlide along the surface, may be passing beside the shape (the tangent
// plane extends past it), so it is measured against the exact shape again.
#include "kernel/core/profile.h"
#include "kernel/contacts/pair_contacts.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <tuple>

#include "kernel/collide/part_distance.h"
#include "kernel/core/parallel.h"
#include "kernel/core/rotation.h"

namespace tendon::detail {

namespace {
constexpr float kPairRemeasureDepth = 0.01f;  // m (see PositionsOne)
constexpr float kPairRemeasureSlide = 0.02f;  // m
}  // namespace

void PairContacts::Reserve(std::size_t pair_capacity) {
  contacts_.resize(pair_capacity * kContactsPerPair);
  contact_count_.resize(pair_capacity);
  contact_begin_.resize(pair_capacity);
  touching_.resize(pair_capacity);
  pushing_.resize(pair_capacity);
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
  for (int32_t i = 0; i < pair_count; ++i) {
    const int32_t found = pairs[i].found;
    assert(i == 0 || found > pairs[i - 1].found);  // the copy below runs forward
    const int32_t count = contact_count_[found];
    if (count == 0) continue;
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
  islands_.ForEach(settings_.tasks, [&](int32_t i) { PositionsOne(i, max_push); },
                   {settings_.profiler, "ragdolls.pair_positions/task", kRagdollColor});
}

void PairContacts::SolveVelocities(float h) {
  islands_.ForEach(settings_.tasks, [&](int32_t i) { VelocitiesOne(i, h); },
                   {settings_.profiler, "ragdolls.pair_velocities/task", kRagdollColor});
}

PairContacts::PairSides PairContacts::LoadPair(int32_t pair_index) {
  const PartPair& pair = islands_.pair(pair_index);
  PairSides s;
  s.pa = &broad_.body(pair.a);
  s.pb = &broad_.body(pair.b);
  RagdollGroup& ga = store_.groups[s.pa->group];
  RagdollGroup& gb = store_.groups[s.pb->group];
  s.ga = &ga;
  s.gb = &gb;
  s.va = ga.ViewOfLane(s.pa->lane);
  s.vb = gb.ViewOfLane(s.pb->lane);
  s.la = ga.LaneInBlock(s.pa->lane);
  s.lb = gb.LaneInBlock(s.pb->lane);
  s.a = ReadBody(s.va, s.la, s.pa->part);
  s.b = ReadBody(s.vb, s.lb, s.pb->part);
  s.ca = &ga.constants[s.pa->part];
  s.cb = &gb.constants[s.pb->part];
  s.a_fixed = store_.slots[s.pa->slot].asleep || s.ca->inv_mass == 0.0f;  // asleep: frozen ones too
  s.b_fixed = store_.slots[s.pb->slot].asleep || s.cb->inv_mass == 0.0f;
  s.ima = s.a_fixed ? 0.0f : s.ca->inv_mass;
  s.imb = s.b_fixed ? 0.0f : s.cb->inv_mass;
  return s;
}
void PairContacts::StorePair(const PairSides& s) {
  if (!s.a_fixed) WriteBody(s.va, s.la, s.pa->part, s.a);
  if (!s.b_fixed) WriteBody(s.vb, s.lb, s.pb->part, s.b);
}

// Once per frame, after the broad phase: the contacts of a pair. Every sample sphere of
// each part against the other part's exact shape; a sample within the frame's reach of
// the shape (the speed of both over the frame, plus 1 cm) is a contact: the sphere's
// point nearest the shape and the shape's nearest surface point, each fixed in its body,
// and the shape's normal there. The kContactsPerPair closest are kept.
void PairContacts::FindOne(const PartPair& pair, float frame_seconds) {
  const PairBody& pa = broad_.body(pair.a);
  const PairBody& pb = broad_.body(pair.b);
  RagdollGroup& ga = store_.groups[pa.group];
  RagdollGroup& gb = store_.groups[pb.group];
  const RigidBlockView va = ga.ViewOfLane(pa.lane), vb = gb.ViewOfLane(pb.lane);
  const int32_t la = ga.LaneInBlock(pa.lane), lb = gb.LaneInBlock(pb.lane);
  const BodyState a = ReadBody(va, la, pa.part);
  const BodyState b = ReadBody(vb, lb, pb.part);
  // A penetration either part was placed in, or pushed out at the bounded speed last
  // frame, goes on being pushed out at that speed (see PositionsOne).
  const float deferred = std::max(va.Part(kRbPairDeferLast, pa.part)[la], vb.Part(kRbPairDeferLast, pb.part)[lb]);
  const RigidPartConstants& ca = ga.constants[pa.part];
  const RigidPartConstants& cb = gb.constants[pb.part];
  Contact* contacts = &contacts_[static_cast<std::size_t>(pair.found) * kContactsPerPair];
  int32_t& count = contact_count_[pair.found];
  count = 0;
  // The pair's reach over the frame (the broad phase kept it only if their bounding
  // spheres get within it).
  const PairMotion& ma = broad_.motion(pair.a);
  const PairMotion& mb = broad_.motion(pair.b);
  const float margin = (Length(ma.v - mb.v) + ma.spin + mb.spin) * frame_seconds + 0.01f;
  const Transform a_shape = Compose(Transform{a.x, a.q, {1, 1, 1}}, ga.shape_in_body[pa.part]);
  const Transform b_shape = Compose(Transform{b.x, b.q, {1, 1, 1}}, gb.shape_in_body[pb.part]);
  const PartCore core_a = CoreOf(ga.shapes[pa.part], a_shape), core_b = CoreOf(gb.shapes[pb.part], b_shape);
  const float spare = 1e-3f + 1e-6f * std::max({std::fabs(a.x.x), std::fabs(a.x.y), std::fabs(a.x.z), std::fabs(b.x.x),
                                                std::fabs(b.x.y), std::fabs(b.x.z)});
  {
    // Every sample sphere lies inside its part's shape, so no sample is nearer the other
    // shape than the two shapes are to each other, and they are at least their cores'
    // distance less both radii apart (CoreOf). When that is past the frame's reach (most
    // pairs in reach are: three in four in the pile scene), no sample would be kept; 1 mm
    // and 1 ppm of the coordinates' size are left for rounding, so the samples' own test
    // would have said the same.
    const float apart = std::sqrt(SegmentDistance2(core_a.a, core_a.b, core_b.a, core_b.b)) - core_a.radius - core_b.radius;
    if (apart > margin + spare) return;
  }
  float separation[kContactsPerPair];
  // p is the body whose sample spheres are tested, q the body whose shape they meet.
  auto find = [&](const BodyState& p, const RagdollGroup& gp, int32_t part_p, const BodyState& q,
                  const RigidPartConstants& cq, const RagdollGroup& gq, int32_t part_q, bool p_is_a) {
    const Transform& q_shape = p_is_a ? b_shape : a_shape;
    for (const auto& smp : gp.pair_points[part_p]) {
      const Vec3 c = p.x + Rotate(p.q, Vec3{smp[0], smp[1], smp[2]});
      const float reach_q = cq.extent + smp[3] + margin;
      if (LengthSquared(c - q.x) >= reach_q * reach_q) continue;
      Vec3 n;  // out of q, toward p
      const float dist = PartShapeDistanceNormal(gq.shapes[part_q], q_shape, c, &n);
      const float gap = dist - smp[3];
      if (!(gap < margin)) continue;
      // Keep the closest: fill, then replace the farthest kept when this one is closer.
      int32_t slot = count;
      if (count == kContactsPerPair) {
        slot = 0;
        for (int32_t k = 1; k < kContactsPerPair; ++k)
          if (separation[k] > separation[slot]) slot = k;
        if (!(gap < separation[slot])) continue;
      } else {
        ++count;
      }
      separation[slot] = gap;
      Contact& ct = contacts[slot];
      ct.sample = Vec3{smp[0], smp[1], smp[2]};
      ct.radius = smp[3];
      ct.normal_on_a = !p_is_a;
      ct.lambda = ct.pre = 0;
      ct.deferred = deferred;
      Anchor(ct, p, q, c, n, dist);
    }
  };
  find(a, ga, pa.part, b, cb, gb, pb.part, true);
  find(b, gb, pb.part, a, ca, ga, pa.part, false);
}

// Fixes a contact's points and normal in its bodies from a measurement: the sample
// sphere of p (centre c) is `dist` from q's shape along n (out of q).
void PairContacts::Anchor(Contact& ct, const BodyState& p, const BodyState& q, Vec3 c, Vec3 n, float dist) {
  const Vec3 on_p = Rotate(Conjugate(p.q), c - n * ct.radius - p.x), on_q = Rotate(Conjugate(q.q), c - n * dist - q.x);
  const Vec3 n_local = Rotate(Conjugate(q.q), n);
  ct.normal = ct.normal_on_a ? -n_local : n_local;
  ct.arm_a = ct.normal_on_a ? on_q : on_p;
  ct.arm_b = ct.normal_on_a ? on_p : on_q;
  ct.stick = Vec3{};
  ct.lambda_sum = 0;  // new points: friction holds them from when they next touch
}

// The position half of a pair, between the halves of a substep: each of the frame's
// contacts is re-measured along its normal; a penetration is pushed apart (XPBD
// positional correction with both generalised inverse masses), then static friction
// undoes the contact's slide over the substep while it stays inside the friction cone.
void PairContacts::PositionsOne(int32_t pair_index, float max_push) {
  const PartPair& pair = islands_.pair(pair_index);
  const int32_t count = contact_count_[pair.found];
  touching_[pair_index] = 0;
  pushing_[pair_index] = 0;
  Contact* contacts = &contacts_[static_cast<std::size_t>(contact_begin_[pair.found])];
  // The bodies' rotations, from their poses; an active pair's solve starts from them too
  // (LoadPair reads the same orientations).
  Rot3 rot_a, rot_b;
  {
    // Many pairs with contacts touch in no substep of the frame, or not in this one: their
    // poses alone say so, before the velocities and the substep's start are read.
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
    rot_a = RotationOf(qa), rot_b = RotationOf(qb);
    const Rot3& ra = rot_a;
    const Rot3& rb = rot_b;
    bool active = false;
    for (int32_t k = 0; k < count && !active; ++k) {
      const Contact& ct = contacts[k];
      const Vec3 n = Apply(ct.normal_on_a ? ra : rb, ct.normal);
      const Vec3 gap = (xa + Apply(ra, ct.arm_a)) - (xb + Apply(rb, ct.arm_b));
      const float depth = Dot(gap, n);
      active = depth < 0 || LengthSquared(gap - n * depth) > kPairRemeasureSlide * kPairRemeasureSlide;
    }
    if (!active) {
      for (int32_t k = 0; k < count; ++k) contacts[k].lambda = 0;
      return;
    }
  }
  PairSides sides = LoadPair(pair_index);
  BodyState& a = sides.a;
  BodyState& b = sides.b;
  const RigidPartConstants& ca = *sides.ca;
  const RigidPartConstants& cb = *sides.cb;
  const bool a_fixed = sides.a_fixed, b_fixed = sides.b_fixed;
  const float ima = sides.ima, imb = sides.imb;
  const float friction = std::sqrt(ca.friction * cb.friction);
  bool moved = false;
  for (int32_t k = 0; k < count; ++k) {
    Contact& ct = contacts[k];
    Vec3 n = Apply(ct.normal_on_a ? rot_a : rot_b, ct.normal);
    Vec3 ra = Apply(rot_a, ct.arm_a), rb = Apply(rot_b, ct.arm_b);
    Vec3 gap = (a.x + ra) - (b.x + rb);
    float depth = Dot(gap, n);
    // The fixed points measure the gap along the frame's normal, which holds while they
    // stay close (a resting or slowly sliding contact). A point that went deeper than
    // kPairRemeasureDepth, or slid kPairRemeasureSlide along the surface, may be passing
    // beside the shape (the tangent plane extends past it): measure the sample against
    // the shape again and fix the new points.
    const Vec3 slid = gap - n * depth;
    if (depth < -kPairRemeasureDepth || LengthSquared(slid) > kPairRemeasureSlide * kPairRemeasureSlide) {
      const BodyState& p = ct.normal_on_a ? b : a;
      const BodyState& q = ct.normal_on_a ? a : b;
      const RagdollGroup& gq = ct.normal_on_a ? *sides.ga : *sides.gb;
      const int32_t part_q = ct.normal_on_a ? sides.pa->part : sides.pb->part;
      const Vec3 c = p.x + Apply(ct.normal_on_a ? rot_b : rot_a, ct.sample);
      Vec3 nq;
      const float dist = PartShapeDistanceNormal(gq.shapes[part_q],
                                                         Compose(Transform{q.x, q.q, {1, 1, 1}}, gq.shape_in_body[part_q]), c, &nq);
      Anchor(ct, p, q, c, nq, dist);
      n = ct.normal_on_a ? -nq : nq;
      ra = Apply(rot_a, ct.arm_a), rb = Apply(rot_b, ct.arm_b);
      depth = dist - ct.radius;
    }
    ct.lambda = 0;
    if (!(depth < 0)) continue;
    // The relative normal speed before the position solve (restitution's reference; read
    // only where lambda ends up above 0).
    ct.pre = Dot((a.v + Cross(a.w, ra)) - (b.v + Cross(b.w, rb)), n);
    const Vec3 ia = InvInertiaWorld(ca, a_fixed, rot_a, Cross(ra, n)), ib = InvInertiaWorld(cb, b_fixed, rot_b, Cross(rb, n));
    const float w = ima + imb + Dot(Cross(ra, n), ia) + Dot(Cross(rb, n), ib);
    if (!(w > 1e-12f)) continue;
    // Depenetration at a bounded speed, as against the static world (SolveContacts in
    // rigid_kernel_impl.h): a penetration parts were placed in is pushed out at most
    // max_push a substep, the rest kept in `deferred` and, across frames, in the parts'
    // kRbPairDeferNow. Every other penetration is taken out at once; one no deeper than
    // max_push is within the bound already.
    float correction = -depth;
    bool bounded = false;
    if (!(depth < -max_push)) {
      ct.deferred = 0;
    } else if (ct.deferred > 0) {
      const Rot3 start_a = RotationOf(a.qp), start_b = RotationOf(b.qp);
      const Vec3 start_gap = (a.xp + Apply(start_a, ct.arm_a)) - (b.xp + Apply(start_b, ct.arm_b));
      const float start_in = std::max(-Dot(start_gap, Apply(ct.normal_on_a ? start_a : start_b, ct.normal)), 0.0f);
      const float left_in = std::max(std::min(start_in, ct.deferred) - max_push, 0.0f);
      ct.deferred = left_in;
      for (auto [view, lane, part, fixed] : {std::tuple{sides.va, sides.la, sides.pa->part, a_fixed},
                                            std::tuple{sides.vb, sides.lb, sides.pb->part, b_fixed}}) {
        float& now = view.Part(kRbPairDeferNow, part)[lane];
        if (!fixed) now = std::max(now, left_in);
      }
      correction = std::max(correction - left_in, 0.0f);
      bounded = true;
      if (!(correction > 0)) continue;
    }
    const float lambda = correction / w;
    ct.lambda = lambda;
    moved = true;
    a.x = a.x + n * (lambda * ima);
    b.x = b.x - n * (lambda * imb);
    a.q = TurnSmall(a.q, ia * lambda);
    b.q = TurnSmall(b.q, ib * -lambda);
    if (bounded) pushing_[pair_index] = 1;
    rot_a = RotationOf(a.q), rot_b = RotationOf(b.q);
    // Static friction: the points stay where they first touched this frame while the
    // tangential impulse that takes stays within friction x the normal impulse since
    // (Coulomb's cone over the contact's life in the frame, not over one substep: a
    // resting contact's normal impulse per substep is only its weight's, too small to
    // hold it against the joints' pulls, and a pile crept a few cm/s under them).
    const bool first = !(ct.lambda_sum > 0);
    ct.lambda_sum += lambda;
    const Vec3 ra2 = Apply(rot_a, ct.arm_a), rb2 = Apply(rot_b, ct.arm_b);
    Vec3 offset = (a.x + ra2) - (b.x + rb2);
    offset = offset - n * Dot(offset, n);
    if (first) ct.stick = offset;
    const Vec3 slide = ct.stick - offset;  // how a's point must move back, relative to b's
    const float slide_len = Length(slide);
    if (!(slide_len > 1e-9f)) continue;
    const Vec3 t = slide * (1.0f / slide_len);
    const Vec3 it_a = InvInertiaWorld(ca, a_fixed, rot_a, Cross(ra2, t));
    const Vec3 it_b = InvInertiaWorld(cb, b_fixed, rot_b, Cross(rb2, t));
    const float wt = ima + imb + Dot(Cross(ra2, t), it_a) + Dot(Cross(rb2, t), it_b);
    const float lambda_t = wt > 1e-12f ? slide_len / wt : 0.0f;
    if (lambda_t < friction * ct.lambda_sum) {
      a.x = a.x + t * (lambda_t * ima);
      b.x = b.x - t * (lambda_t * imb);
      a.q = TurnSmall(a.q, it_a * lambda_t);
      b.q = TurnSmall(b.q, it_b * -lambda_t);
      rot_a = RotationOf(a.q), rot_b = RotationOf(b.q);
    } else {
      ct.stick = offset;  // it slips: hold from here (pulling it back later would yank it)
    }
  }
  if (moved) StorePair(sides);
  touching_[pair_index] = moved ? 1 : 0;
}

// The velocity half of a pair, after the velocities were derived from the positions:
// restitution (none for slow approaches) and dynamic friction at the recorded contacts.
void PairContacts::VelocitiesOne(int32_t pair_index, float h) {
  if (touching_[pair_index] == 0) return;  // no contact pushed this substep
  const int32_t found = islands_.pair(pair_index).found;
  const int32_t count = contact_count_[found];
  PairSides sides = LoadPair(pair_index);
  BodyState& a = sides.a;
  BodyState& b = sides.b;
  const RigidPartConstants& ca = *sides.ca;
  const RigidPartConstants& cb = *sides.cb;
  const bool a_fixed = sides.a_fixed, b_fixed = sides.b_fixed;
  const float ima = sides.ima, imb = sides.imb;
  const float restitution = 0.5f * (ca.restitution + cb.restitution);
  const float friction = std::sqrt(ca.friction * cb.friction);
  const float g = Length(settings_.gravity);
  const Contact* contacts = &contacts_[static_cast<std::size_t>(contact_begin_[found])];
  bool touching = false;
  const Rot3 rot_a = RotationOf(a.q), rot_b = RotationOf(b.q);  // orientations are fixed here
  for (int32_t k = 0; k < count; ++k) {
    const Contact& ct = contacts[k];
    if (!(ct.lambda > 0)) continue;
    touching = true;
    const Vec3 n = Apply(ct.normal_on_a ? rot_a : rot_b, ct.normal);
    const Vec3 ra = Apply(rot_a, ct.arm_a), rb = Apply(rot_b, ct.arm_b);
    const Vec3 vr = (a.v + Cross(a.w, ra)) - (b.v + Cross(b.w, rb));
    const float vn = Dot(vr, n);
    const Vec3 vt = vr - n * vn;
    const float vt_len = Length(vt);
    const float e = ct.pre < -2.0f * g * h ? restitution : 0.0f;
    // Still being pushed out of a placement (PositionsOne): they part at the push speed.
    const float target = std::max(-e * ct.pre, ct.deferred > 0 ? settings_.max_push_speed : 0.0f);
    const float cut = std::min(friction * ct.lambda / h, vt_len);
    const Vec3 dv = n * (target - vn) - (vt_len > 1e-9f ? vt * (cut / vt_len) : Vec3{});
    const Vec3 dir = NormalizeOr(dv, n);
    const Vec3 ja = InvInertiaWorld(ca, a_fixed, rot_a, Cross(ra, dir)), jb = InvInertiaWorld(cb, b_fixed, rot_b, Cross(rb, dir));
    const float w = ima + imb + Dot(Cross(ra, dir), ja) + Dot(Cross(rb, dir), jb);
    if (!(w > 1e-12f)) continue;
    const Vec3 impulse = dv * (1.0f / w);
    a.v = a.v + impulse * ima;
    b.v = b.v - impulse * imb;
    a.w = a.w + InvInertiaWorld(ca, a_fixed, rot_a, Cross(ra, impulse));
    b.w = b.w - InvInertiaWorld(cb, b_fixed, rot_b, Cross(rb, impulse));
  }
  if (!touching) return;
  if (pushing_[pair_index] != 0) {
    // Pushed out of a placement at the bounded speed this substep: neither part moves
    // away from the pair's common motion (its centre of mass's, or a fixed part's) faster
    // than that, nor spins faster than the push turns it. Otherwise the pushes of many
    // contacts, and the joints between them, add up to speeds no push had: two Jolt humans
    // bound 30 cm apart reached twice the energy without it.
    const float cap = settings_.max_push_speed;
    const Vec3 common = a_fixed ? a.v : (b_fixed ? b.v : (a.v * imb + b.v * ima) * (1.0f / (ima + imb)));
    for (auto [body, c, fixed] : {std::tuple{&a, &ca, a_fixed}, std::tuple{&b, &cb, b_fixed}}) {
      if (fixed) continue;
      const Vec3 away = body->v - common;
      const float speed = Length(away);
      if (speed > cap) body->v = common + away * (cap / speed);
      const float spin = Length(body->w), spin_cap = cap / std::max(c->extent, 0.01f);
      if (spin > spin_cap) body->w = body->w * (spin_cap / spin);
    }
  }
  // Rolling resistance between touching parts, as against the static world: their
  // relative spin decays at ragdoll_contact_angular_damping (a pile stops rolling).
  const float keep = std::max(1.0f - settings_.contact_angular_damping * h, 0.0f);
  const Vec3 spin = (a.w - b.w) * (1.0f - keep);
  const float share_a = a_fixed ? 0.0f : (b_fixed ? 1.0f : 0.5f);
  a.w = a.w - spin * share_a;
  b.w = b.w + spin * (a_fixed ? 1.0f : (b_fixed ? 0.0f : 0.5f));
  StorePair(sides);
}

Vec3 PairContacts::InvInertiaWorld(const RigidPartConstants& c, bool fixed, const Rot3& r, Vec3 u) {
  if (fixed) return Vec3{};
  const Vec3 l = ApplyInverse(r, u);
  return Apply(r, Vec3{l.x * c.inv_inertia[0], l.y * c.inv_inertia[1], l.z * c.inv_inertia[2]});
}

}  // namespace tendon::detail
