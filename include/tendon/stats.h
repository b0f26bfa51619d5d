// tendon/stats.h: what one World::Step did, and what it had to drop.
//
// What it does: FrameStats is filled by every Step (even one that steps nothing) and
// stays valid until the next Step. Counts are exact; times are wall clock.
// What it does NOT do: aggregate across frames (the demo and the trace writer do).
// Threading: read it on the thread that called Step. Memory: a plain value.
#pragma once

#include <cstdint>

namespace tendon {

// What the millisecond budget (WorldSettings::frame_budget_ms) decided after a frame, for
// the next one.
enum class BudgetAction : uint8_t {
  kOff,       // no budget set
  kHeld,      // within its band (or a frame that ran no substep): limits unchanged
  kCut,       // over the budget: fewer chains, then fewer ragdoll substeps
  kRestored,  // well under it with something cut: substeps back first, then chains
  kAtFloor,   // over the budget with nothing left to cut (no chains, substeps at the floor)
};

// Wall time of each phase of a frame, milliseconds. Each phase's time runs from the end
// of the phase before it on the same thread (so the few instructions between two phases
// count in the later one); a phase with no work (no ragdolls, an empty chain pass, no
// pendulums) is 0.
struct PhaseTimes {
  double gather_ms = 0;     // read host poses of every bound chain, teleport guard, distance keys
                            // (and the frame's opening, its clock and stats, when nothing
                            // else ran in it: one counter read fewer)
  double budget_ms = 0;     // eligibility, nearest-N selection, lane repacking
  double pose_ms = 0;       // animated world pose of every simulated chain into its lanes
  double solve_ms = 0;      // the substeps (SIMD kernel)
  double writeback_ms = 0;  // local transforms into the host's buffers
  double pendulum_ms = 0;   // accessory pendulums (solve and writeback)
  double ragdoll_ms = 0;    // characters (pose, controls, writeback) and ragdoll XPBD substeps
  double total_ms = 0;
};

enum : uint32_t {
  kPhaseCount = 7,
};

struct FrameStats {
  uint64_t frame = 0;          // 1 for the first Step
  int32_t substeps = 0;        // fixed substeps run this frame (0..max_substeps)
  float dropped_seconds = 0;   // frame time the hitch clamp dropped
  bool dt_rejected = false;    // dt was zero, negative or not finite: nothing stepped
  // Render interpolation (WorldSettings::render_interpolation): how far this frame's time
  // is past the last substep, in substeps, [0, 1). What was written is the state alpha of
  // the way from the substep before the last to the last; 1 when interpolation is off.
  float interpolation_alpha = 1;

  int32_t bound_chains = 0;
  int32_t bound_pendulums = 0;
  int32_t simulated_chains = 0;      // chains awake in lanes this frame
  int32_t simulated_pendulums = 0;
  int64_t simulated_instance_substeps = 0;  // (chains + pendulums) x substeps that ran
  int32_t sleeping_chains = 0;       // bound chains not simulated (culled or over budget)
  int32_t culled_by_distance = 0;    // of those: not eligible (distance or host predicate)
  int32_t culled_by_budget = 0;      // of those: eligible but past max_chains
  int32_t sleeping_pendulums = 0;
  int32_t bound_ragdolls = 0;
  int32_t disabled_ragdolls = 0;     // bound but switched off (inactive characters): not stepped
  int32_t simulated_ragdolls = 0;    // enabled, awake, stepped
  int32_t sleeping_ragdolls = 0;     // asleep (frozen ones included)
  int32_t frozen_ragdolls = 0;       // frozen: settled where they lie
  int32_t ragdoll_substeps = 0;      // XPBD substeps each ragdoll ran this frame
  int32_t ragdoll_pairs = 0;         // part pairs of different ragdolls in contact range
  int32_t dropped_ragdoll_pairs = 0; // pairs past the capacity (16 per bound part): not solved
  int32_t contact_ragdoll_pairs = 0; // of ragdoll_pairs, those with a contact: the ones solved
  // Islands: awake ragdolls joined by pairs with a contact, each solved colour by colour
  // as one task per substep half; an island holding more than half of the pairs (and
  // over 512 of them) is instead split by colour, each colour's pairs in parallel.
  int32_t ragdoll_islands = 0;
  int32_t coloured_ragdoll_pairs = 0;  // pairs of the island split by colour (0: none)

  int32_t bound_characters = 0;
  int32_t active_characters = 0;     // ragdolled (physics owns the bones)
  int32_t dropped_character_events = 0;  // events lost since the last Step: the queue (4 per
                                         // bound character) was full; drain it every frame

  int32_t snapped_teleport = 0;      // roots that jumped or turned past the guard
  int32_t snapped_wake = 0;          // chains that woke (or were bound) and started at the pose
  int32_t snapped_bad_input = 0;     // non-finite animated input: held at the last good pose
  int32_t reset_non_finite = 0;      // simulated state went non-finite: reset to the pose
                                     // (per lane: a kVrm chain split into strands counts each
                                     // strand it resets, and resets only those)

  int32_t chain_blocks = 0;          // blocks of lanes holding simulated chains
  int32_t lanes_used = 0;            // of chain_blocks * lane width
  float lane_occupancy = 0;          // lanes_used / (chain_blocks * lane width), 0 when none

  // The millisecond budget (WorldSettings::frame_budget_ms). The limits it set for this
  // frame, and what it decided from this frame's cost for the next.
  int32_t budget_max_chains = -1;       // chains it let simulate this frame; -1: no cap (or off)
  int32_t budget_ragdoll_substeps = 0;  // ragdoll substeps per fixed step it allowed; 0 when off
  BudgetAction budget_action = BudgetAction::kOff;
  float budget_estimate_ms = 0;  // its smoothed cost of this frame, per frame of the usual substep count

  PhaseTimes times{};

  // Contact events (tendon/contact_events.h): queued by this Step, and lost: past
  // WorldSettings::contact_event_capacity this Step, or left undrained since the last
  // Step (each Step starts a fresh queue).
  int32_t contact_events = 0;
  int32_t dropped_contact_events = 0;
  int32_t broken_drives = 0;  // part drives that let go past their break distance this frame
};

}  // namespace tendon
