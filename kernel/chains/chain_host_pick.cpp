// The host-body pick of the chains' pose phase: see chain_host_pick.h.
#include "kernel/chains/chain_host_pick.h"

#include <algorithm>
#include <cmath>

#include "kernel/chains/chain_archetype.h"

namespace tendon::detail {
namespace {

// A box's unit axes in world space (its rotation's columns).
void BoxAxes(const HostShape& h, Vec3 axes[3]) {
  const Quat q = Normalize(Quat{h.q[0], h.q[1], h.q[2], h.q[3]});
  axes[0] = Rotate(q, Vec3{1, 0, 0});
  axes[1] = Rotate(q, Vec3{0, 1, 0});
  axes[2] = Rotate(q, Vec3{0, 0, 1});
}

bool Finite(Vec3 v) { return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z); }

struct Candidate {
  float distance2;
  int32_t shape;
};

// Keeps the `slots` nearest in picks (nearest first, ties to the lower index): the same
// set and order whatever order the candidates come in.
void Offer(Candidate* picks, int32_t& kept, int32_t slots, Candidate c) {
  auto before = [](const Candidate& x, const Candidate& y) {
    return x.distance2 < y.distance2 || (x.distance2 == y.distance2 && x.shape < y.shape);
  };
  if (kept == slots && !before(c, picks[kept - 1])) return;
  int32_t at = kept < slots ? kept++ : kept - 1;
  for (; at > 0 && before(c, picks[at - 1]); --at) picks[at] = picks[at - 1];
  picks[at] = c;
}

bool Overlap(Vec3 lo, Vec3 hi, const HostPickBounds& b) {
  return lo.x <= b.hi.x && b.lo.x <= hi.x && lo.y <= b.hi.y && b.lo.y <= hi.y && lo.z <= b.hi.z && b.lo.z <= hi.z;
}

float Axis(Vec3 v, int32_t axis) { return axis == 0 ? v.x : axis == 1 ? v.y : v.z; }

}  // namespace

bool HostShapeBounds(const HostShape& h, Vec3* lo, Vec3* hi) {
  if (h.trigger) return false;
  const Vec3 a{h.a[0], h.a[1], h.a[2]};
  Vec3 extent;
  if (h.kind == kHostSphere || h.kind == kHostCapsule) {
    const Vec3 b = h.kind == kHostCapsule ? Vec3{h.b[0], h.b[1], h.b[2]} : a;
    const Vec3 r{h.radius, h.radius, h.radius};
    *lo = Vec3{std::min(a.x, b.x), std::min(a.y, b.y), std::min(a.z, b.z)} - r;
    *hi = Vec3{std::max(a.x, b.x), std::max(a.y, b.y), std::max(a.z, b.z)} + r;
  } else if (h.kind == kHostBox) {
    Vec3 axes[3];
    BoxAxes(h, axes);
    extent = Vec3{0, 0, 0};
    for (int32_t i = 0; i < 3; ++i) {
      const Vec3 u = axes[i] * h.half[i];
      extent = extent + Vec3{std::fabs(u.x), std::fabs(u.y), std::fabs(u.z)};
    }
    *lo = a - extent;
    *hi = a + extent;
  } else {
    return false;
  }
  return Finite(*lo) && Finite(*hi) && std::isfinite(h.radius);
}

float HostShapeDistance2(const HostShape& h, Vec3 point) {
  const Vec3 a{h.a[0], h.a[1], h.a[2]};
  if (h.kind == kHostBox) {
    Vec3 axes[3];
    BoxAxes(h, axes);
    float d2 = 0.0f;
    for (int32_t i = 0; i < 3; ++i) {
      const float l = Dot(point - a, axes[i]);
      const float out = l - std::clamp(l, -h.half[i], h.half[i]);
      d2 += out * out;
    }
    return d2;
  }
  const Vec3 b = h.kind == kHostCapsule ? Vec3{h.b[0], h.b[1], h.b[2]} : a;
  const Vec3 d = b - a;
  const float t = std::clamp(Dot(point - a, d) / std::max(Dot(d, d), 1e-12f), 0.0f, 1.0f);
  return LengthSquared(point - (a + d * t));
}

int32_t PickHostShapesLinear(std::span<const HostShape> shapes, const HostPickBounds& bounds, uint32_t mask,
                             int32_t max_picks, int32_t* out) {
  const int32_t slots = std::clamp(max_picks, 0, kMaxChainHostBodies);
  Candidate picks[kMaxChainHostBodies];
  int32_t kept = 0;
  const Vec3 centre = (bounds.lo + bounds.hi) * 0.5f;
  for (std::size_t i = 0; i < shapes.size() && slots > 0; ++i) {
    const HostShape& h = shapes[i];
    Vec3 lo, hi;
    if ((h.group & mask) == 0 || !HostShapeBounds(h, &lo, &hi) || !Overlap(lo, hi, bounds)) continue;
    Offer(picks, kept, slots, {HostShapeDistance2(h, centre), static_cast<int32_t>(i)});
  }
  for (int32_t j = 0; j < kept; ++j) out[j] = picks[j].shape;
  return kept;
}

void HostBroadPhase::Reserve(std::size_t shapes) {
  entries_.reserve(shapes);
  reach_.reserve(shapes);
}

void HostBroadPhase::Build(std::span<const HostShape> shapes) {
  shapes_ = shapes;
  entries_.clear();  // push_back and reach_ below stay within Reserve's capacity: no allocation in a Step
  reach_.clear();
  // The axis along which the pushing shapes' centres spread the most: sorted along it, a
  // query's slice holds the fewest shapes (a crowd on a plane spreads along x or z).
  Vec3 c_lo{1e30f, 1e30f, 1e30f}, c_hi{-1e30f, -1e30f, -1e30f};
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    Entry e;
    if (!HostShapeBounds(shapes[i], &e.lo, &e.hi)) continue;
    e.group = shapes[i].group;
    e.shape = static_cast<int32_t>(i);
    const Vec3 c = (e.lo + e.hi) * 0.5f;
    c_lo = Vec3{std::min(c_lo.x, c.x), std::min(c_lo.y, c.y), std::min(c_lo.z, c.z)};
    c_hi = Vec3{std::max(c_hi.x, c.x), std::max(c_hi.y, c.y), std::max(c_hi.z, c.z)};
    entries_.push_back(e);
  }
  const Vec3 spread = c_hi - c_lo;
  axis_ = spread.y > spread.x ? 1 : 0;
  if (spread.z > Axis(spread, axis_)) axis_ = 2;
  const int32_t axis = axis_;
  std::sort(entries_.begin(), entries_.end(), [axis](const Entry& x, const Entry& y) {
    const float xl = Axis(x.lo, axis), yl = Axis(y.lo, axis);
    return xl < yl || (xl == yl && x.shape < y.shape);
  });
  float reach = -1e30f;
  for (const Entry& e : entries_) {
    reach = std::max(reach, Axis(e.hi, axis));
    reach_.push_back(reach);
  }
}

int32_t HostBroadPhase::Pick(const HostPickBounds& bounds, uint32_t mask, int32_t max_picks, int32_t* out) const {
  const int32_t slots = std::clamp(max_picks, 0, kMaxChainHostBodies);
  if (slots == 0 || entries_.empty()) return 0;
  const float q_lo = Axis(bounds.lo, axis_), q_hi = Axis(bounds.hi, axis_);
  // Bounds that are not finite overlap nothing (as the linear scan's comparisons say).
  if (!(q_lo <= q_hi)) return 0;
  // Entries before `first` end below the query (their running reach does); from `end` on
  // they start above it.
  const auto first = static_cast<std::size_t>(std::lower_bound(reach_.begin(), reach_.end(), q_lo) - reach_.begin());
  const int32_t axis = axis_;
  const auto end = static_cast<std::size_t>(
      std::upper_bound(entries_.begin(), entries_.end(), q_hi,
                       [axis](float v, const Entry& e) { return v < Axis(e.lo, axis); }) -
      entries_.begin());
  Candidate picks[kMaxChainHostBodies];
  int32_t kept = 0;
  const Vec3 centre = (bounds.lo + bounds.hi) * 0.5f;
  for (std::size_t i = first; i < end; ++i) {
    const Entry& e = entries_[i];
    if ((e.group & mask) == 0 || !Overlap(e.lo, e.hi, bounds)) continue;
    Offer(picks, kept, slots, {HostShapeDistance2(shapes_[e.shape], centre), e.shape});
  }
  for (int32_t j = 0; j < kept; ++j) out[j] = picks[j].shape;
  return kept;
}

}  // namespace tendon::detail
