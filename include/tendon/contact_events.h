// tendon/contact_events.h: contact and impact events: a ragdoll part began (or stopped)
// touching the static world or another ragdoll's part, and a part drive that let go.
//
// What it does: describes the events World::Step queues and World::DrainContactEvents
// hands to the host, and the per-archetype thresholds that decide which contacts are
// worth one (RagdollSettings::contact_events). An event is one impact, not one per
// substep or per contact point: "began" when a part touches, during a frame, something it
// did not touch in the frame before (the static world as a whole; another ragdoll's part
// pair by pair), carrying the fastest approach over the frame's substeps and the normal
// impulse the solver applied over the frame. A part that stays in contact reports nothing
// more, so bodies at rest never flood the queue. "ended" (optional) when it is gone.
// The queue holds WorldSettings::contact_event_capacity events per frame (0: events off,
// and free); events past it, and events the host did not drain before the next Step, are
// dropped and counted in FrameStats::dropped_contact_events.
// A part drive (tendon/part_drive.h) that breaks past its break_distance queues one
// kDriveBroken event in the frame it let go (side B: the drive, b_drive). These are
// queued whatever contact_event_capacity says (0 turns only contact events off): room for
// one per live drive is reserved at World::AddPartDrive, so a break is never dropped for
// lack of room (only when left undrained, and counted the same).
// Order: within a frame, the static world's events by side A's RagdollId slot, then its
// part; then the events between ragdolls by (the lower slot, its part, the higher slot,
// its part); then the triggers'; then the broken drives' by PartDriveId slot. The same at
// any worker count.
// What it does NOT do: report contacts between parts of one ragdoll (self-collision), or
// between chains and their colliders.
// Threading and memory: plain values.
#pragma once

#include <cstdint>

#include "tendon/ids.h"
#include "tendon/math.h"

namespace tendon {

// Per ragdoll archetype (RagdollSettings::contact_events): which of its parts' contacts
// are reported. A began event needs both thresholds passed. The defaults report a part
// that lands from a fall of about 5 cm or more (a 2 m fall hits at 6.3 m/s) and never a
// body at rest, whose contacts approach at about g x the substep length (a few cm/s) and
// stay touching from frame to frame in any case.
struct ContactEventSettings {
  // false: this archetype's parts report nothing (and cost nothing).
  bool enabled = true;
  // N s, >= 0 and finite: the normal impulse the solver applied to the part at the contact
  // over the frame; 0 disables this threshold.
  float min_impulse = 0.01f;
  // m/s, >= 0 and finite: the fastest approach along the normal over the frame's substeps,
  // before the solve (a fall from h meets the ground at sqrt(2 g h)); 0 disables it.
  float min_normal_speed = 1.0f;
  // true: an "ended" event when a contact that was reported as began is gone (no contact
  // in a whole frame). false: only "began".
  bool report_ended = false;
};

enum class ContactEventKind : uint8_t {
  kBegan,  // a part started touching something it did not touch the frame before
  kEnded,  // a reported contact is gone (ContactEventSettings::report_ended)
  // A part drive let go past its break_distance (b_kind kPartDrive): reported once, in the
  // frame it broke, whatever the archetype's ContactEventSettings say.
  kDriveBroken,
};

// What side B of an event is.
enum class ContactSideKind : uint8_t {
  kStaticWorld,  // the static world (planes, shapes, meshes)
  kRagdollPart,  // a part of another ragdoll (b_ragdoll, b_part)
  kHostBody,     // a host body (b_host_body)
  kPartDrive,    // a part drive on side A's part (b_drive): kDriveBroken events
};

struct ContactEvent {
  ContactEventKind kind = ContactEventKind::kBegan;
  // Side A: always a ragdoll part. part indexes RagdollSettings::parts (the archetype's
  // part and bone order; World::GetRagdollPartInfo names it). character: the character
  // whose ragdoll it is, null when none.
  RagdollId ragdoll{};
  int32_t part = -1;
  CharacterId character{};
  // Side B.
  ContactSideKind b_kind = ContactSideKind::kStaticWorld;
  RagdollId b_ragdoll{};    // kRagdollPart
  int32_t b_part = -1;      // kRagdollPart
  HostBodyId b_host_body{};  // kHostBody
  PartDriveId b_drive{};     // kPartDrive: the drive that broke (still live until removed)
  // World frame, at the end of the frame: a point of the contact (m; against the static
  // world, of the part's contact sphere nearest the surface; between ragdolls, of the
  // contact that pushed the most) and the unit normal there, pointing from B toward A.
  // Ended events: where the part is now (static world) or was last seen touching (pairs).
  // kDriveBroken: the driven point (PartDriveSettings::local_point) and the unit direction
  // from the drive's target toward it.
  Vec3 point{};
  Vec3 normal{};
  // m/s, >= 0: the fastest approach along the normal over the frame's substeps, before
  // the solve (0 for ended events).
  float normal_speed = 0;
  // N s, >= 0: the normal impulse the solver applied over the frame (0 for ended events).
  // Against the static world both passes of each substep count (a landing's is about
  // mass x approach speed); between ragdolls, the position passes only (a lower figure).
  float impulse = 0;
  // m, kDriveBroken only (0 otherwise): how far the driven point was from the target when
  // the drive let go (> its break_distance).
  float distance = 0;
  double time = 0;  // world clock at the end of the frame, seconds
};

}  // namespace tendon
