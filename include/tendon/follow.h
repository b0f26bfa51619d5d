// tendon/follow.h: following received poses on the receiving side, and the ownership
// handover (World::FollowRagdoll, PushFollowSample, StopFollowing; docs/snapshots.md).
//
// What it does: a followed ragdoll shows what another machine simulates. The host pushes
// samples (a time in the sender's seconds, every part's world frame, optionally every
// part's velocities as GetRagdollVelocities gives them) as they arrive, late and out of
// order; each Step the parts are steered toward the pose the samples give at the follow
// clock minus interpolation_delay_seconds: interpolated between the two samples around
// that time (positions on a cubic Hermite curve when both samples carry velocities, else
// linearly; rotations by nlerp), or extrapolated from the newest sample's velocities when
// the next is late (for at most max_extrapolation_seconds, then held). The parts stay
// dynamic bodies: each Step sets their velocities so that they reach the target at the
// end of the frame's fixed steps, with gravity cancelled, so joints, contacts with the
// static world and with everything the receiver simulates itself (its own ragdolls, host
// bodies) still act on them, and they push back. A part further than snap_distance from
// its target places the whole body there instead (as SetRagdollPartStates would).
// StopFollowing hands ownership to the receiver: the ragdoll simulates on from the
// positions and velocities it has (no jump, no velocity reset), with the host's own
// acceleration (SetRagdollAcceleration) back on.
// The follow clock: the World's simulated time (the fixed steps it has run) plus an offset
// (World::SetFollowClock sets the clock to the host's estimate of the senders' time now;
// 0 offset until then). Steps advance it; the host need not call it every frame.
// What it does NOT do: encode, decode or send anything (tendon/net_snapshot.h does the
// bytes); estimate the network's clock offset or jitter (the host sets the clock and the
// delay); follow a character's ragdoll (its character drives it: kInUse); save follow
// state (SaveState refuses while any ragdoll is followed).
// Threading: the World's calls (one thread, between Steps); the steering runs serially at
// the start of each Step, in ragdoll handle order, so results do not depend on the worker
// count. Memory: FollowRagdoll allocates the ragdoll's ring of kFollowSampleCapacity
// samples; PushFollowSample, Step and StopFollowing do not.
#pragma once

#include <cmath>
#include <cstdint>

namespace tendon {

// Samples kept per followed ragdoll (a ring, sorted by time): everything from the one
// before the played time to the newest arrived, which at 60 per second, 0.2 s of delay and
// 50 ms of network delay is 10; when the ring is full the oldest goes (about 1.5 KB per
// part of the ragdoll).
inline constexpr int32_t kFollowSampleCapacity = 16;

struct FollowSettings {
  // How far behind the follow clock the pose shown is, in seconds, (0, 10]. It must exceed
  // the network's delay and jitter plus a sample interval for the samples around the
  // played time to have arrived (0.1 s: 20 samples per second over up to 50 ms of jitter).
  float interpolation_delay_seconds = 0.1f;
  // How long past the newest sample the pose is extrapolated along its velocities, in
  // seconds, [0, 10]; past it the pose holds. 0: never extrapolated (held at the newest).
  float max_extrapolation_seconds = 0.25f;
  // How quickly a part closes the distance to its target, in seconds, [0, 10]: each Step
  // moves it along the target's own motion plus (distance / max(response, frame time)).
  // 0 (or anything under a frame): it reaches the target at the end of each frame,
  // stiffly (what keeps it closest to the sender); larger: a softer pull that yields more
  // to what pushes it on the receiver.
  float response_seconds = 0.0f;
  // A part's steering speed is capped here, m/s, (0, 1e4]; a catch-up faster than this is
  // what snap_distance is for.
  float max_speed = 50.0f;
  // A part further than this (m) from its target places the whole ragdoll at the target
  // pose (with the target's velocities) instead of steering it, (0, inf]. INFINITY: never
  // placed (always steered, however far). The first sample of a ragdoll far from its
  // current pose is placed this way.
  float snap_distance = 1.0f;
};

}  // namespace tendon
