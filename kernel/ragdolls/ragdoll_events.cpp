// kernel/ragdolls/ragdoll_events.cpp: contact and impact events (tendon/contact_events.h):
// which of the frame's contacts began or ended, queued for the host.
//
// What it does: one event per impact, not one per substep or contact point. Against the
// static world, per part: the rigid kernels record, where a part's contact point pushes
// in a substep, the frame's fastest approach and its summed normal impulse
// (kRbImpactSpeed, kRbImpactImpulse, rigid_kernel_contact_solve.h); a part that pushed in
// some substep of the frame "touched" it, and kRbContactState remembers whether it did in
// the last stepped frame and whether that contact was reported. Between two ragdolls, per
// part pair: PairContacts::Impact says the same of a kept pair's contacts, and a sorted
// list of the pairs that touched (by PairKey) is the memory. Began: touched now, not in
// the last frame, and both of side A's archetype thresholds passed. Ended (report_ended):
// a reported contact that did not touch in a whole frame. A sleeping ragdoll's contacts
// are held as they were (it is not stepped, so nothing began or ended).
// Order: the static world's events by slot and part, then the pairs' by key (the lower
// slot and part first); none of it depends on the worker count (the rows are per lane,
// the pairs sorted).
// Host bodies are side B (SideOfRagdoll: kHostBody), never side A; a character's
// kinematic copy is side B as the character's ragdoll. Triggers' overlaps begin and end
// (CollectTriggerEvents) after the pairs' events, by trigger, then ragdoll slot and part.
// What it does NOT do: report self-collision or chains.
// Threading: CollectContactEvents is serial, on the thread that runs the frame's stages,
// after the solve; Drain on the World's thread between Steps.
// Memory: the queue is reserved at construction (WorldSettings::contact_event_capacity;
// AddPartDrive adds room for its broken-drive events, ragdoll_drives.cpp), the pair lists
// at bind (ReserveContacts); nothing here allocates in Step. PushContactEvent stops at
// contact_event_capacity, so the room past it is the drives' alone.
#include <algorithm>

#include "kernel/core/rotation.h"
#include "kernel/ragdolls/ragdoll_system.h"

namespace tendon::detail {

namespace {

// kRbContactState's bits (a small integer held in a float row, so it moves with its lane).
constexpr uint32_t kTouchedLastFrame = 1;  // the part pushed against the static world last frame
constexpr uint32_t kReportedBegan = 2;     // ... and that contact's began event was queued

// A pair of parts of two ragdolls, the lower (slot, part) first: slots are below 2^20
// (kMaxRagdollInstances) and parts below 64 (kMaxRagdollParts), 26 bits a side.
constexpr uint64_t SidePacked(uint32_t slot, int32_t part) {
  return (static_cast<uint64_t>(slot) << 6) | static_cast<uint64_t>(part);
}
constexpr uint64_t PairKey(uint32_t slot_a, int32_t part_a, uint32_t slot_b, int32_t part_b) {
  const uint64_t a = SidePacked(slot_a, part_a), b = SidePacked(slot_b, part_b);
  return a < b ? (a << 26) | b : (b << 26) | a;
}
constexpr uint32_t SlotOf(uint64_t side) { return static_cast<uint32_t>(side >> 6); }
constexpr int32_t PartOf(uint64_t side) { return static_cast<int32_t>(side & 63u); }
constexpr uint64_t LowSide(uint64_t key) { return key >> 26; }
constexpr uint64_t HighSide(uint64_t key) { return key & ((uint64_t{1} << 26) - 1); }
static_assert(kMaxRagdollInstances <= (1 << 20) && kMaxRagdollParts <= 64, "PairKey's bits");

bool Passes(const ContactEventSettings& s, float speed, float impulse) {
  return speed >= s.min_normal_speed && impulse >= s.min_impulse;
}

}  // namespace

int32_t RagdollSystem::DrainContactEvents(std::span<ContactEvent> out) {
  const std::size_t n = std::min(out.size(), events_.size() - events_read_);
  std::copy_n(events_.begin() + static_cast<std::ptrdiff_t>(events_read_), n, out.begin());
  events_read_ += n;
  return static_cast<int32_t>(n);
}

void RagdollSystem::StartContactEvents(FrameStats& stats) {
  // Each Step starts a fresh queue: what the host left is lost, and counted.
  events_dropped_ = static_cast<int32_t>(events_.size() - events_read_);
  events_.clear();
  events_read_ = 0;
  stats.contact_events = 0;
  stats.dropped_contact_events = events_dropped_;
}

bool RagdollSystem::RecordsImpacts() const {
  if (settings_.contact_event_capacity <= 0) return false;
  for (const RagdollGroup& g : store_.groups)
    if (g.lanes_enabled > 0 && archetypes_[g.archetype].contact_events.enabled) return true;
  return false;
}

void RagdollSystem::ResetImpacts(const RigidBlockView& view, int32_t part_count) {
  for (int32_t j = 0; j < part_count; ++j) {
    std::fill_n(view.Part(kRbImpactSpeed, j), view.lanes, -1.0f);  // touched nothing yet
    std::fill_n(view.Part(kRbImpactImpulse, j), view.lanes, 0.0f);
  }
}

ContactSideKind RagdollSystem::SideOfRagdoll(int32_t slot, HostBodyId* host_body, RagdollId* ragdoll) const {
  const RagdollSlot& s = store_.slots[slot];
  *host_body = HostBodyId{};
  *ragdoll = store_.handles.HandleAt(static_cast<uint32_t>(slot));
  if (s.internal == kHostBodySlot) {
    *host_body = HostBodyId{s.owner_index, s.owner_generation};
    *ragdoll = RagdollId{};
    return ContactSideKind::kHostBody;
  }
  // A character's kinematic copy: the character's own ragdoll (the same parts).
  if (s.internal == kCharacterTwinSlot) *ragdoll = RagdollId{s.owner_index, s.owner_generation};
  return ContactSideKind::kRagdollPart;
}

void RagdollSystem::CollectTriggerEvents() {
  overlapping_next_.clear();
  for (const TriggerOverlap& o : contacts_.TriggerOverlaps()) {
    if (overlapping_next_.size() == overlapping_next_.capacity()) break;  // never past the reservation
    overlapping_next_.push_back((static_cast<uint64_t>(o.trigger_slot) << 26) | SidePacked(static_cast<uint32_t>(o.slot), o.part));
  }
  std::sort(overlapping_next_.begin(), overlapping_next_.end());
  // Began: in this frame's list, not last frame's; ended: the other way round. Both are
  // reported (an overlap's end is what a trigger is for), whatever the thresholds say.
  auto emit = [&](uint64_t key, ContactEventKind kind) {
    const auto trigger = static_cast<uint32_t>(key >> 26);
    const uint32_t slot = SlotOf(key & ((uint64_t{1} << 26) - 1));
    if (!store_.handles.IsLiveAt(trigger) || !store_.handles.IsLiveAt(slot)) return;
    const RagdollSlot& s = store_.slots[slot];
    if (s.internal != kHostRagdoll || !archetypes_[store_.groups[s.group].archetype].contact_events.enabled) return;
    const RagdollSlot& t = store_.slots[trigger];
    ContactEvent ev;
    ev.kind = kind;
    ev.ragdoll = store_.handles.HandleAt(slot);
    ev.part = PartOf(key & ((uint64_t{1} << 26) - 1));
    ev.b_kind = ContactSideKind::kHostBody;
    ev.b_host_body = HostBodyId{t.owner_index, t.owner_generation};
    Vec3 x;
    Quat q;
    ReadPose(store_.groups[s.group].ViewOfLane(s.lane), store_.groups[s.group].LaneInBlock(s.lane), ev.part, &x, &q);
    ev.point = x;  // the part's centre of mass: an overlap has no one contact point
    PushContactEvent(ev);
  };
  std::size_t p = 0, n = 0;
  while (p < overlapping_.size() || n < overlapping_next_.size()) {
    if (n < overlapping_next_.size() && (p == overlapping_.size() || overlapping_next_[n] < overlapping_[p])) {
      emit(overlapping_next_[n++], ContactEventKind::kBegan);
    } else if (n == overlapping_next_.size() || overlapping_[p] < overlapping_next_[n]) {
      emit(overlapping_[p++], ContactEventKind::kEnded);
    } else {
      ++p, ++n;
    }
  }
  std::swap(overlapping_, overlapping_next_);
}

bool RagdollSystem::PushContactEvent(const ContactEvent& event) {
  if (events_.size() >= static_cast<std::size_t>(settings_.contact_event_capacity)) {
    ++events_dropped_;
    return false;
  }
  events_.push_back(event);  // reserved at construction: never allocates
  return true;
}

void RagdollSystem::CollectContactEvents(FrameStats& stats) {
  if (frame_.params.record_impacts) {
    for (uint32_t i = 0; i < store_.handles.SlotCount(); ++i) {
      if (store_.handles.IsLiveAt(i) && store_.slots[i].enabled) CollectStaticEvents(static_cast<int32_t>(i));
    }
    CollectPairEvents();
    CollectTriggerEvents();
  }
  stats.contact_events = static_cast<int32_t>(events_.size());
  stats.dropped_contact_events = events_dropped_;
}

void RagdollSystem::CollectStaticEvents(int32_t slot_index) {
  const RagdollSlot& slot = store_.slots[slot_index];
  RagdollGroup& g = store_.groups[slot.group];
  const ContactEventSettings& settings = archetypes_[g.archetype].contact_events;
  if (!settings.enabled) return;
  const RigidBlockView view = g.ViewOfLane(slot.lane);
  const int32_t l = g.LaneInBlock(slot.lane);
  if (view.Lane(kAsleep)[l] > 0.5f) return;  // not stepped: its contacts stay as they were
  for (int32_t j = 0; j < g.part_count; ++j) {
    const RigidPartConstants& c = g.constants[j];
    if (c.inv_mass == 0.0f || c.point_count == 0) continue;  // the kernels never touch it
    float& state_row = view.Part(kRbContactState, j)[l];
    const uint32_t state = state_row >= 0.0f && state_row < 4.0f ? static_cast<uint32_t>(state_row) : 0u;
    const float speed = view.Part(kRbImpactSpeed, j)[l];
    const float impulse = view.Part(kRbImpactImpulse, j)[l];
    const bool touched = speed >= 0.0f && std::isfinite(impulse) && std::isfinite(speed);
    const bool was = (state & kTouchedLastFrame) != 0;
    bool reported = (state & kReportedBegan) != 0;
    if (touched != was) {
      ContactEvent e;
      e.kind = touched ? ContactEventKind::kBegan : ContactEventKind::kEnded;
      e.ragdoll = store_.handles.HandleAt(static_cast<uint32_t>(slot_index));
      e.part = j;
      e.b_kind = ContactSideKind::kStaticWorld;
      // The point and normal of the part's contact sphere nearest its plane at the end of
      // the frame (the planes are the frame's, found on its first substep).
      BodyState b;
      ReadMotion(view, l, j, &b);
      const Rot3 r = RotationOf(b.q);
      float nearest = INFINITY;
      for (int32_t k = 0; k < c.point_count; ++k) {
        const Vec3 n{view.Contact(kCnx, j, k)[l], view.Contact(kCny, j, k)[l], view.Contact(kCnz, j, k)[l]};
        const Vec3 centre = b.x + Apply(r, Vec3{c.points[k][0], c.points[k][1], c.points[k][2]});
        const float gap = Dot(centre, n) - c.points[k][3] - view.Contact(kPlaneOffset, j, k)[l];
        if (!(gap < nearest)) continue;
        nearest = gap;
        e.point = centre - n * c.points[k][3];
        e.normal = n;
      }
      if (touched) {
        e.normal_speed = speed;
        e.impulse = std::max(impulse, 0.0f);
        // A began the queue had no room for is not followed by an ended one.
        reported = Passes(settings, speed, impulse) && PushContactEvent(e);
      } else {
        if (reported && settings.report_ended) PushContactEvent(e);
        reported = false;
      }
    }
    state_row = static_cast<float>((touched ? kTouchedLastFrame : 0u) | (touched && reported ? kReportedBegan : 0u));
  }
}

bool RagdollSystem::PairEvent(const TouchingPair& t, ContactEventKind kind, ContactEvent* out,
                              const ContactEventSettings** settings) const {
  const uint64_t sides[2] = {LowSide(t.key), HighSide(t.key)};
  const uint32_t generations[2] = {t.generation_low, t.generation_high};
  for (int32_t s = 0; s < 2; ++s) {
    const uint32_t slot = SlotOf(sides[s]);
    if (!store_.handles.IsLiveAt(slot) || store_.handles.HandleAt(slot).generation != generations[s]) return false;
  }
  for (int32_t s = 0; s < 2; ++s) {
    const uint32_t slot = SlotOf(sides[s]), other = SlotOf(sides[1 - s]);
    const ContactEventSettings& es = archetypes_[store_.groups[store_.slots[slot].group].archetype].contact_events;
    // Side A is always one of the host's ragdolls, never a host body or a kinematic copy.
    if (!es.enabled || store_.slots[slot].internal != kHostRagdoll) continue;
    ContactEvent e;
    e.kind = kind;
    e.ragdoll = store_.handles.HandleAt(slot);
    e.part = PartOf(sides[s]);
    HostBodyId host;
    RagdollId other_ragdoll;
    e.b_kind = SideOfRagdoll(static_cast<int32_t>(other), &host, &other_ragdoll);
    if (e.b_kind == ContactSideKind::kHostBody) {
      e.b_host_body = host;
    } else {
      e.b_ragdoll = other_ragdoll;
      e.b_part = PartOf(sides[1 - s]);
    }
    e.point = t.point;
    e.normal = s == 0 ? t.normal : -t.normal;
    if (kind == ContactEventKind::kBegan) e.normal_speed = t.speed, e.impulse = t.impulse;
    *out = e;
    *settings = &es;
    return true;
  }
  return false;
}

void RagdollSystem::CollectPairEvents() {
  touching_next_.clear();
  const float inv_h = frame_.params.dt > 0.0f ? 1.0f / frame_.params.dt : 0.0f;
  // This frame's touching pairs (the kept pairs, in any order: sorted below).
  for (int32_t i = 0; i < frame_.pair_count; ++i) {
    const PartPair& pair = broad_.pairs()[static_cast<std::size_t>(i)];
    const PairContacts::FrameImpact impact = contacts_.Impact(pair);
    if (!impact.touched) continue;
    if (touching_next_.size() == touching_next_.capacity()) break;  // never past the reservation
    const PairBody& a = broad_.body(pair.a);
    const PairBody& b = broad_.body(pair.b);
    const auto slot_a = static_cast<uint32_t>(a.slot), slot_b = static_cast<uint32_t>(b.slot);
    const bool a_low = SidePacked(slot_a, a.part) < SidePacked(slot_b, b.part);
    TouchingPair t;
    t.key = PairKey(slot_a, a.part, slot_b, b.part);
    t.generation_low = store_.handles.HandleAt(a_low ? slot_a : slot_b).generation;
    t.generation_high = store_.handles.HandleAt(a_low ? slot_b : slot_a).generation;
    t.speed = impact.approach;
    t.impulse = impact.lambda * inv_h;
    t.point = impact.point;
    t.normal = a_low ? impact.normal : -impact.normal;  // Impact's points from b's part to a's
    touching_next_.push_back(t);
  }
  std::sort(touching_next_.begin(), touching_next_.end(),
            [](const TouchingPair& x, const TouchingPair& y) { return x.key < y.key; });
  // Last frame's and this frame's lists, walked together in key order.
  const std::size_t last_count = touching_pairs_.size(), next_count = touching_next_.size();
  std::size_t p = 0, n = 0;
  bool carried = false;
  while (p < last_count || n < next_count) {
    if (n < next_count && (p == last_count || touching_next_[n].key < touching_pairs_[p].key)) {
      TouchingPair& t = touching_next_[n++];  // began
      ContactEvent e;
      const ContactEventSettings* es = nullptr;
      t.reported = PairEvent(t, ContactEventKind::kBegan, &e, &es) && Passes(*es, t.speed, t.impulse) &&
                   PushContactEvent(e);
    } else if (n == next_count || touching_pairs_[p].key < touching_next_[n].key) {
      const TouchingPair& t = touching_pairs_[p++];  // gone, unless both ragdolls sleep
      const uint32_t low = SlotOf(LowSide(t.key)), high = SlotOf(HighSide(t.key));
      const bool sleeping = store_.handles.IsLiveAt(low) && store_.handles.IsLiveAt(high) &&
                            store_.slots[low].enabled && store_.slots[high].enabled && store_.slots[low].asleep &&
                            store_.slots[high].asleep;
      if (sleeping) {
        if (touching_next_.size() < touching_next_.capacity()) touching_next_.push_back(t), carried = true;
        continue;
      }
      ContactEvent e;
      const ContactEventSettings* es = nullptr;
      if (t.reported && PairEvent(t, ContactEventKind::kEnded, &e, &es) && es->report_ended) PushContactEvent(e);
    } else {
      touching_next_[n++].reported = touching_pairs_[p++].reported;  // still touching
    }
  }
  if (carried) {
    std::sort(touching_next_.begin(), touching_next_.end(),
              [](const TouchingPair& x, const TouchingPair& y) { return x.key < y.key; });
  }
  std::swap(touching_pairs_, touching_next_);
}

}  // namespace tendon::detail
