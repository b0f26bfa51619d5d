// kernel/contacts/broad_phase.cpp: which parts of different ragdolls may touch this frame.
//
// Per frame, not per substep: bounds grown by each part's motion over the frame cover
// every substep. Ragdolls are swept along x by the lower edge of their bounds (ties by
// order, so the result does not depend on sort stability); only the parts of one ragdoll
// inside the other's bounds are tested against each other, then their bounding spheres
// grown by their relative speed over the frame (the reach PairContacts::Find uses). Pairs
// are written in sweep order, which the islands keep within each island: the order of a
// pair's solve never depends on the worker count.
#include "kernel/core/profile.h"
#include "kernel/contacts/broad_phase.h"

#include <algorithm>
#include <numeric>

#include "kernel/core/parallel.h"
#include "kernel/core/rotation.h"

namespace tendon::detail {

void BroadPhase::Reserve(int32_t total_parts, int32_t slot_count) {
  bodies_.resize(total_parts);
  broad_.resize(total_parts);
  motion_.resize(total_parts);
  cores_.resize(total_parts);
  shape_frames_.resize(total_parts);
  ragdoll_boxes_.resize(slot_count);
  box_order_.resize(slot_count);
  part_pairs_.resize(static_cast<std::size_t>(total_parts) * kPairsPerPart);
  sweep_runs_.resize(slot_count);
  sweep_scratch_.resize(static_cast<std::size_t>(WorkerSlots(tasks_)));
  for (SweepScratch& scratch : sweep_scratch_) {
    // As many candidates as pairs there is room for: a worker that finds more hands the
    // frame's sweep to the serial pass.
    scratch.candidates.resize(part_pairs_.size());
    scratch.near_a.resize(kMaxRagdollParts);
    scratch.near_b.resize(kMaxRagdollParts);
  }
}

namespace {
bool Overlap(Vec3 alo, Vec3 ahi, Vec3 blo, Vec3 bhi) {
  return alo.x <= bhi.x && blo.x <= ahi.x && alo.y <= bhi.y && blo.y <= ahi.y && alo.z <= bhi.z && blo.z <= ahi.z;
}
}  // namespace

// Boxes grown by each part's own speed overlap for two parts falling side by side; their
// bounding spheres, grown by their relative speed over the frame (as PairContacts::Find
// reaches), say whether they can touch this frame at all.
bool BroadPhase::Reaches(int32_t body_a, int32_t body_b, float frame_seconds) const {
  const PairMotion& ma = motion_[body_a];
  const PairMotion& mb = motion_[body_b];
  const float reach = ma.extent + mb.extent + (Length(ma.v - mb.v) + ma.spin + mb.spin) * frame_seconds + 0.01f;
  return !(LengthSquared(ma.x - mb.x) > reach * reach);
}

template <class Emit>
bool BroadPhase::SelfPairs(int32_t oa, const RagdollStore& store, float frame_seconds, Emit&& emit) const {
  const RagdollBox& ba = ragdoll_boxes_[box_order_[oa]];
  const RagdollGroup& ga = store.groups[store.slots[ba.slot].group];
  for (const auto& [x, y] : ga.self_pairs) {
    if (x >= ba.count || y >= ba.count) continue;
    const BroadEntry& ex = broad_[ba.first + x];
    const BroadEntry& ey = broad_[ba.first + y];
    if (Overlap(ex.lo, ex.hi, ey.lo, ey.hi) && Reaches(ba.first + x, ba.first + y, frame_seconds) &&
        !emit(ba.first + x, ba.first + y))
      return false;
  }
  return true;
}

// Within an overlapping pair of ragdolls, only the parts inside the other ragdoll's bounds
// are tested against each other (a pile of ragdolls lined up along x would otherwise sweep
// most of its parts against most others).
template <class Emit>
bool BroadPhase::CrossPairs(int32_t oa, int32_t ob, float frame_seconds, int32_t* near_a, int32_t* near_b,
                            Emit&& emit) const {
  const RagdollBox& ba = ragdoll_boxes_[box_order_[oa]];
  const RagdollBox& bb = ragdoll_boxes_[box_order_[ob]];
  int32_t na = 0, nb = 0;
  for (int32_t j = 0; j < ba.count; ++j) {
    const BroadEntry& e = broad_[ba.first + j];
    if (Overlap(e.lo, e.hi, bb.lo, bb.hi)) near_a[na++] = ba.first + j;
  }
  for (int32_t j = 0; j < bb.count; ++j) {
    const BroadEntry& e = broad_[bb.first + j];
    if (Overlap(e.lo, e.hi, ba.lo, ba.hi)) near_b[nb++] = bb.first + j;
  }
  for (int32_t i = 0; i < na; ++i) {
    const BroadEntry& ea = broad_[near_a[i]];
    for (int32_t k = 0; k < nb; ++k) {
      const BroadEntry& eb = broad_[near_b[k]];
      if (Overlap(ea.lo, ea.hi, eb.lo, eb.hi) && Reaches(near_a[i], near_b[k], frame_seconds) &&
          !emit(near_a[i], near_b[k]))
        return false;
    }
  }
  return true;
}

template <class Emit>
bool BroadPhase::SweepOne(int32_t oa, const RagdollStore& store, float frame_seconds, bool defer_sleepers,
                          int32_t* near_a, int32_t* near_b, Emit&& emit) const {
  const RagdollBox& ba = ragdoll_boxes_[box_order_[oa]];
  const RagdollSlot& sa = store.slots[ba.slot];
  const RagdollGroup& ga = store.groups[sa.group];
  // Listed self-collision pairs, while the ragdoll is awake (its own pairs never wake it).
  if (sa.asleep) {
    if (defer_sleepers && !ga.self_pairs.empty() && !emit(-1, 0)) return false;
  } else if (!SelfPairs(oa, store, frame_seconds, emit)) {
    return false;
  }
  for (int32_t ob = oa + 1; ob < box_count_ && ragdoll_boxes_[box_order_[ob]].lo.x <= ba.hi.x; ++ob) {
    const RagdollBox& bb = ragdoll_boxes_[box_order_[ob]];
    if (!Overlap(ba.lo, ba.hi, bb.lo, bb.hi)) continue;
    const RagdollSlot& sb = store.slots[bb.slot];
    const RagdollGroup& gb = store.groups[sb.group];
    // Filtered by groups, or one is in 'static' collide mode and the other is not.
    if ((ga.collision_group & gb.collision_mask) == 0 || (gb.collision_group & ga.collision_mask) == 0 ||
        sa.collide_mode != sb.collide_mode || (ga.kinematic_bodies && gb.kinematic_bodies))
      continue;
    if (sa.asleep && sb.asleep) {
      if (defer_sleepers && !emit(-2, ob)) return false;
      continue;
    }
    if (!CrossPairs(oa, ob, frame_seconds, near_a, near_b, emit)) return false;
  }
  return true;
}

// Once per frame: every awake or sleeping part's bounds (grown by its motion over the
// frame) and each ragdoll's (their union). Ragdolls are sorted along x and swept for
// overlapping pairs, filtered by collision groups and modes; within an overlapping pair,
// only the parts inside the other ragdoll's bounds are tested against each other (a pile
// of ragdolls lined up along x would otherwise sweep most of its parts against most
// others). Listed self-collision pairs are tested directly. A sleeping ragdoll that may
// be touched is woken. The islands then order the pairs (islands.h).
void BroadPhase::Run(RagdollStore& store, const Sleep& sleep, float frame_seconds, FrameStats& stats) {
  std::vector<RagdollGroup>& groups = store.groups;
  std::vector<RagdollSlot>& slots = store.slots;
  int32_t n = 0, boxes = 0;
  for (std::size_t i = 0; i < slots.size(); ++i) {
    const RagdollSlot& r = slots[i];
    if (!r.enabled) continue;  // a free slot is never enabled
    ragdoll_boxes_[boxes++] = RagdollBox{{}, {}, n, r.part_count, static_cast<int32_t>(i)};
    n += r.part_count;
  }
  // The bounds, in parallel over ragdolls (each writes its own bodies' entries).
  auto bounds = [&](int32_t begin, int32_t end, uint32_t) {
    for (int32_t k = begin; k < end; ++k) {
      RagdollBox& box = ragdoll_boxes_[k];
      const RagdollSlot& r = slots[box.slot];
      RagdollGroup& g = groups[r.group];
      const RigidBlockView view = g.ViewOfLane(r.lane);
      const int32_t l = g.LaneInBlock(r.lane);
      box.lo = Vec3{1e30f, 1e30f, 1e30f};
      box.hi = Vec3{-1e30f, -1e30f, -1e30f};
      for (int32_t j = 0; j < r.part_count; ++j) {
        BodyState body{};
        ReadMotion(view, l, j, &body);
        const float spin = Length(body.w) * g.constants[j].extent;
        const float margin = (Length(body.v) + spin) * frame_seconds + 0.01f;
        motion_[box.first + j] = PairMotion{body.x, body.v, g.constants[j].extent, spin};
        const Transform& shape_frame = shape_frames_[box.first + j] =
            Compose(Transform{body.x, body.q, {1, 1, 1}}, g.shape_in_body[j]);
        cores_[box.first + j] = CoreOf(g.shapes[j], shape_frame);
        const Rot3 rot = RotationOf(body.q);
        Vec3 lo{1e30f, 1e30f, 1e30f}, hi{-1e30f, -1e30f, -1e30f};
        for (const auto& p : g.pair_points[j]) {
          const Vec3 c = body.x + Apply(rot, Vec3{p[0], p[1], p[2]});
          const float e = p[3] + margin;
          lo = Vec3{std::min(lo.x, c.x - e), std::min(lo.y, c.y - e), std::min(lo.z, c.z - e)};
          hi = Vec3{std::max(hi.x, c.x + e), std::max(hi.y, c.y + e), std::max(hi.z, c.z + e)};
        }
        const int32_t body_index = box.first + j;
        bodies_[body_index] = PairBody{r.group, r.lane, j, box.slot};
        broad_[body_index] = BroadEntry{lo, hi, body_index};
        box.lo = Vec3{std::min(box.lo.x, lo.x), std::min(box.lo.y, lo.y), std::min(box.lo.z, lo.z)};
        box.hi = Vec3{std::max(box.hi.x, hi.x), std::max(box.hi.y, hi.y), std::max(box.hi.z, hi.z)};
      }
    }
  };
  ParallelFor(tasks_, boxes, 8, bounds, {profiler_, "ragdolls.broad_phase/task", kRagdollColor});
  for (int32_t i = 0; i < boxes; ++i) box_order_[i] = i;
  std::sort(box_order_.begin(), box_order_.begin() + boxes, [&](int32_t a, int32_t b) {
    return ragdoll_boxes_[a].lo.x < ragdoll_boxes_[b].lo.x || (ragdoll_boxes_[a].lo.x == ragdoll_boxes_[b].lo.x && a < b);
  });
  box_count_ = boxes;
  pair_count_ = 0;
  int32_t dropped = 0;
  // A ragdoll touched by a part moving faster than twice the sleep speed over the last
  // frame wakes. One touched more gently stays asleep and acts as static in the pair (a
  // frozen one always does): bodies settling onto a sleeping pile do not keep waking it.
  // The speed is the part's frame speed (RagdollSlot::frame_speed), not its velocity:
  // contacts that settle a pile leave parts with velocities of 0.1-0.5 m/s that go back
  // and forth within a frame while the parts move a few mm/s, and waking on those woke
  // neighbour after neighbour and kept piles awake. Whether a ragdoll sleeps changes as
  // the sweep goes (a pair wakes it), so this part of the sweep runs in sweep order.
  auto keep_pair = [&](int32_t body_a, int32_t body_b) {
    const PairBody& pa = bodies_[body_a];
    const PairBody& pb = bodies_[body_b];
    RagdollSlot& sa = slots[pa.slot];
    RagdollSlot& sb = slots[pb.slot];
    if (sa.asleep && sb.asleep) return;
    auto speed_of = [&](const PairBody& body) { return slots[body.slot].frame_speed[body.part]; };
    for (int side = 0; side < 2; ++side) {
      RagdollSlot* s = side == 0 ? &sa : &sb;
      if (!s->asleep || s->frozen) continue;
      const PairBody& other = side == 0 ? pb : pa;
      if (!sleep.WakesOnTouch(speed_of(other), slots[other.slot])) continue;
      s->asleep = false;
      s->still_seconds = s->slow_seconds = 0;
      groups[s->group].LaneField(s->lane, kAsleep) = 0.0f;
    }
    if (pair_count_ >= static_cast<int32_t>(part_pairs_.size())) {
      ++dropped;
      return;
    }
    part_pairs_[pair_count_] = PartPair{std::min(body_a, body_b), std::max(body_a, body_b), 0, pair_count_};
    ++pair_count_;
  };
  // Serially, in sweep order: a pair's sleep test, wakes, and the pair kept. A test that
  // both ragdolls' sleep put off is made now if one of them woke since.
  const auto keep = [&](int32_t a, int32_t b) {
    keep_pair(a, b);
    return true;
  };
  auto keep_run = [&](int32_t oa, const Candidate* c, const Candidate* end, int32_t* near_a, int32_t* near_b) {
    const RagdollSlot& sa = slots[ragdoll_boxes_[box_order_[oa]].slot];
    for (; c != end; ++c) {
      if (c->a >= 0) {
        keep_pair(c->a, c->b);
      } else if (c->a == -1) {
        if (!sa.asleep) SelfPairs(oa, store, frame_seconds, keep);
      } else if (!(sa.asleep && slots[ragdoll_boxes_[box_order_[c->b]].slot].asleep)) {
        CrossPairs(oa, c->b, frame_seconds, near_a, near_b, keep);
      }
    }
  };
  SweepScratch& first = sweep_scratch_[0];
  bool swept = false;
  if (sweep_scratch_.size() > 1 && tasks_.enqueue != nullptr) {
    for (SweepScratch& scratch : sweep_scratch_) scratch.used = 0, scratch.full = false;
    auto tests = [&](int32_t begin, int32_t end, uint32_t worker) {
      SweepScratch& scratch = sweep_scratch_[worker];
      const auto room = static_cast<int32_t>(scratch.candidates.size());
      auto add = [&scratch, room](int32_t a, int32_t b) {
        if (scratch.used == room) return false;
        scratch.candidates[scratch.used++] = Candidate{a, b};
        return true;
      };
      for (int32_t oa = begin; oa < end && !scratch.full; ++oa) {
        const int32_t from = scratch.used;
        scratch.full = !SweepOne(oa, store, frame_seconds, true, scratch.near_a.data(), scratch.near_b.data(), add);
        sweep_runs_[oa] = SweepRun{static_cast<int32_t>(worker), from, scratch.used};
      }
    };
    ParallelFor(tasks_, boxes, 4, tests, {profiler_, "ragdolls.sweep/task", kRagdollColor});
    bool full = false;
    for (const SweepScratch& scratch : sweep_scratch_) full = full || scratch.full;
    if (!full) {
      for (int32_t oa = 0; oa < boxes; ++oa) {
        const SweepRun& run = sweep_runs_[oa];
        const Candidate* c = sweep_scratch_[run.worker].candidates.data();
        keep_run(oa, c + run.begin, c + run.end, first.near_a.data(), first.near_b.data());
      }
      swept = true;
    }
  }
  // One worker (or a worker's room ran out): the whole sweep in one serial pass.
  for (int32_t oa = 0; !swept && oa < boxes; ++oa)
    SweepOne(oa, store, frame_seconds, false, first.near_a.data(), first.near_b.data(), keep);
  stats.dropped_ragdoll_pairs = dropped;
  stats.ragdoll_pairs = pair_count_;
  body_count_ = n;
}


}  // namespace tendon::detail
