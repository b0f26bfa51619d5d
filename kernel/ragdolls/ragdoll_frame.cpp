// kernel/ragdolls/ragdoll_frame.cpp: the ragdoll frame (RagdollSystem::Step), stage by
// stage.
//
// A frame runs these stages, in this order (each a member function of its name, with its
// own profiler zone and named tasks):
//   BeginFrame  serial: the work items (blocks with enabled lanes: disabled instances cost
//               the solver nothing) and the frame's solve parameters; nothing enabled,
//               nothing more to do
//   Prepare     per block ("ragdolls.prepare"): kinematic roots follow their host frames (a
//               moving one wakes its ragdoll; a non-finite one is held and counted); what
//               the pairs' bounded depenetration left last frame rolls over, and render
//               interpolation starts from where this frame's fixed steps start
//   FindPairs   serial, when two or more ragdolls are enabled: the broad phase
//               ("ragdolls.broad_phase"), the pairs' contacts ("ragdolls.pairs"), then the
//               islands of the pairs with one ("ragdolls.islands"), once for the frame
//   Solve       the substeps: with no pair, each block runs all of them in one kernel call
//               (its bodies stay in registers and L1); otherwise one substep at a time, in
//               XPBD order with the pairs inside: the kernel's positions, the pairs'
//               positions, the kernel's velocities (derived from positions), the pairs'
//               velocity pass. Where the pairs leave the stepped blocks in two or more
//               domains (ragdoll_domains.h), each domain runs that sequence for every
//               substep in one task ("ragdolls.domains"), with no barrier between the
//               passes; otherwise each pass is a parallel-for over blocks or islands
//               ("ragdolls.substep")
//   Writeback   per block ("ragdolls.writeback"): lanes that went non-finite are reset to
//               the last written pose at rest and counted; sleep; part frames into the
//               host's buffers, render-interpolated
//   EndFrame    serial: the counts, summed in work-item order, and the sleepers
// What it does NOT do: move lanes (PackAwakeLanes runs before a frame, on the World's
// call), or allocate: every array it touches was sized at bind time.
// Threading: the per-block stages write only their own block's lanes and slots, and every
// count that crosses items is summed serially in item order, so results do not depend on
// the worker count.
#include <cmath>

#include "kernel/collide/static_world.h"
#include "kernel/core/finite.h"
#include "kernel/core/parallel.h"
#include "kernel/core/profile.h"
#include "kernel/core/rotation.h"
#include "kernel/ragdolls/ragdoll_system.h"

namespace tendon::detail {

void RagdollSystem::Step(int32_t substeps, double step_seconds, float alpha, const StaticWorld& static_world,
                         FrameStats& stats, uint32_t thread) {
  StartContactEvents(stats);
  broken_drives_.clear();  // the last frame's breaks (no allocation: the capacity stays)
  if (!BeginFrame(substeps, step_seconds, static_world, stats)) return;
  Prepare(thread);
  FindPairs(stats, thread);
  Solve(thread);
  CollectContactEvents(stats);
  Writeback(alpha, thread);
  EndFrame(stats);
}

bool RagdollSystem::BeginFrame(int32_t substeps, double step_seconds, const StaticWorld& static_world,
                               FrameStats& stats) {
  int32_t count = 0, enabled = 0;
  internal_enabled_ = 0;
  for (int32_t gi = 0; gi < static_cast<int32_t>(store_.groups.size()); ++gi) {
    // Only blocks with enabled lanes are work: disabled instances cost the solver nothing.
    const int32_t width = store_.groups[gi].block_lanes;
    const int32_t blocks = (store_.groups[gi].lanes_enabled + width - 1) / width;
    group_first_work_[gi] = count;
    for (int32_t b = 0; b < blocks; ++b) work_[count++] = {gi, b};
    enabled += store_.groups[gi].lanes_enabled;
    // The World's own instances (host bodies, characters' copies) are not the host's
    // ragdolls; they are exactly the kinematic-body groups' lanes.
    if (store_.groups[gi].kinematic_bodies) internal_enabled_ += store_.groups[gi].lanes_enabled;
  }
  stats.bound_ragdolls = LiveCount() - internal_live_;
  stats.disabled_ragdolls = LiveCount() - internal_live_ - (enabled - internal_enabled_);
  stats.simulated_ragdolls = 0;
  if (count == 0) return false;
  frame_.substeps = substeps;
  frame_.work_count = count;
  frame_.enabled = enabled;
  frame_.ragdoll_steps = substeps * frame_substeps_;
  frame_.pair_count = 0;
  stats.ragdoll_substeps = frame_.ragdoll_steps;
  RigidSolveParams& params = frame_.params;
  params = RigidSolveParams{};
  params.substeps = frame_.ragdoll_steps;
  params.iterations = settings_.ragdoll_iterations;
  params.dt = static_cast<float>(step_seconds) / static_cast<float>(frame_substeps_);
  params.gravity[0] = settings_.gravity.x;
  params.gravity[1] = settings_.gravity.y;
  params.gravity[2] = settings_.gravity.z;
  static_world.FillSolveParams(params);
  params.contact_angular_damping = settings_.ragdoll_contact_angular_damping;
  params.max_push = settings_.ragdoll_max_push_speed * params.dt;
  params.frame_seconds = static_cast<float>(step_seconds) * static_cast<float>(substeps);
  params.record_impacts = substeps > 0 && RecordsImpacts();
  frame_.frame_seconds = static_cast<float>(step_seconds) * static_cast<float>(substeps);
  return true;
}

void RagdollSystem::Prepare(uint32_t thread) {
  const int32_t substeps = frame_.substeps;
  auto pre = [&](int32_t begin, int32_t end, uint32_t) {
    for (int32_t i = begin; i < end; ++i) {
      bad_inputs_[i] = 0;
      RagdollGroup& g = store_.groups[work_[i].group];
      const RigidBlockView view = g.View(work_[i].block);
      if (frame_.params.record_impacts) ResetImpacts(view, g.part_count);
      // The pairs' bounded depenetration: what they left in last frame (or a placement's
      // mark) is read by this frame's contacts.
      for (int32_t j = 0; j < g.part_count; ++j) {
        float* now = view.Part(kRbPairDeferNow, j);
        float* last = view.Part(kRbPairDeferLast, j);
        for (int32_t l = 0; l < view.lanes; ++l) last[l] = now[l], now[l] = 0.0f;
        // Render interpolation starts from where this frame's fixed steps start.
        if (substeps > 0) {
          for (int32_t f = 0; f < 7; ++f) {
            const float* pose = view.Part(kRbXx + f, j);
            float* start = view.Part(kRbFrameStartX + f, j);
            for (int32_t l = 0; l < view.lanes; ++l) start[l] = pose[l];
          }
        }
      }
      if (g.kinematic_bodies) {
        // Host bodies and twins moving to targets: the velocities that reach them.
        for (int32_t l = 0; l < g.block_lanes; ++l) {
          const int32_t lane = work_[i].block * g.block_lanes + l;
          const int32_t owner = lane < g.lanes_enabled ? g.lane_owner[lane] : -1;
          if (owner >= 0) AimKinematicLane(store_.slots[owner], view, l, frame_.frame_seconds);
        }
        continue;
      }
      for (int32_t l = 0; l < g.block_lanes; ++l) {
        const int32_t lane = work_[i].block * g.block_lanes + l;
        const int32_t owner = lane < g.lanes_enabled ? g.lane_owner[lane] : -1;
        if (owner < 0 || store_.slots[owner].kinematic_root == nullptr) continue;
        const Transform target = *store_.slots[owner].kinematic_root;
        if (!IsFinite(target) || !UsableRotation(target.rotation)) {
          ++bad_inputs_[i];  // held where it was, and counted
          continue;
        }
        const Transform body = Compose(Transform{target.translation, Normalize(target.rotation), {1, 1, 1}}, g.body_in_part[0]);
        const float values[7] = {body.translation.x, body.translation.y, body.translation.z, body.rotation.x,
                                 body.rotation.y,    body.rotation.z,    body.rotation.w};
        bool moved = false;
        for (int32_t f = 0; f < 7; ++f) {
          float& field = view.Part(kRbXx + f, 0)[l];
          moved = moved || std::fabs(field - values[f]) > 1e-6f;
          field = values[f];
        }
        // A moving kinematic root wakes (and unfreezes) its ragdoll.
        if (moved && store_.slots[owner].asleep) {
          store_.slots[owner].asleep = store_.slots[owner].frozen = false;
          store_.slots[owner].still_seconds = store_.slots[owner].slow_seconds = 0;
          view.Lane(kAsleep)[l] = 0.0f;
        }
      }
    }
  };
  ProfileZone zone(profiler_, "ragdolls.prepare", kRagdollColor, thread);
  ParallelFor(settings_.tasks, frame_.work_count, 1, pre, {profiler_, "ragdolls.prepare/task", kRagdollColor});
}

// The pairs in reach get their contacts; only those with one are ordered into islands and
// solved (FindPairs leaves frame_.pair_count of them).
void RagdollSystem::FindPairs(FrameStats& stats, uint32_t thread) {
  stats.ragdoll_pairs = stats.dropped_ragdoll_pairs = stats.contact_ragdoll_pairs = 0;
  broad_.Clear();
  contacts_.ClearTriggerOverlaps();
  int32_t pair_count = 0;
  if (frame_.substeps > 0 && frame_.enabled > 1) {
    {
      ProfileZone zone(profiler_, "ragdolls.broad_phase", kRagdollColor, thread);
      broad_.Run(store_, sleep_, frame_.frame_seconds, stats);
    }
    if (broad_.pair_count() > 0) {
      ProfileZone zone(profiler_, "ragdolls.pairs", kRagdollColor, thread);
      pair_count = contacts_.Find(broad_.pairs(), frame_.frame_seconds);
    }
    stats.contact_ragdoll_pairs = pair_count;
    ProfileZone zone(profiler_, "ragdolls.islands", kRagdollColor, thread);
    islands_.Order(broad_.pairs().first(static_cast<std::size_t>(pair_count)), broad_.bodies(), broad_.body_count(),
                   store_.slots, stats);
  }
  frame_.pair_count = pair_count;
}

void RagdollSystem::SolveBlock(int32_t i, int32_t which, bool find_static) {
  RagdollGroup& g = store_.groups[work_[i].group];
  const RigidBlockView view = g.View(work_[i].block);
  if (g.kinematic_bodies) {
    AdvanceKinematic(view, which, frame_.params.substeps, frame_.params.dt);
    return;
  }
  RigidSolveParams local = frame_.params;
  local.parts = g.constants.data();
  local.part_count = g.part_count;
  local.find_static_contacts = find_static;
  const RigidKernels* kernel_set = kernels_;
  (which == 0 ? kernel_set->solve : (which == 1 ? kernel_set->positions : kernel_set->velocities))(&view, 1, local);
}

// All the substeps at once per block when no pair between ragdolls has a contact this
// frame; otherwise one at a time, each with the pairs' passes inside it, by domain or
// substep by substep.
void RagdollSystem::Solve(uint32_t thread) {
  const int32_t pair_count = frame_.pair_count;
  RigidSolveParams& params = frame_.params;
  const int32_t calls = pair_count > 0 ? frame_.ragdoll_steps : (frame_.substeps > 0 ? 1 : 0);
  params.substeps = pair_count > 0 ? 1 : frame_.ragdoll_steps;
  auto run = [&](int32_t which) {
    auto task_fn = [&](int32_t begin, int32_t end, uint32_t) {
      for (int32_t i = begin; i < end; ++i) SolveBlock(i, which, params.find_static_contacts);
    };
    ParallelFor(settings_.tasks, frame_.work_count, 1, task_fn, {profiler_, "ragdolls.substeps/task", kRagdollColor});
  };
  const float h = params.dt;
  const int32_t domains =
      pair_count > 0 && domains_enabled_
          ? domains_.Build(std::span<const RagdollWorkItem>(work_.data(), static_cast<std::size_t>(frame_.work_count)),
                           group_first_work_, store_.groups, broad_, islands_, pair_count, WorkerSlots(settings_.tasks))
          : 0;
  last_domains_ = domains;
  if (domains >= 2) {
    // Each domain runs every substep in one task, in the order below: its blocks stay
    // with one worker, and no barrier stands between the halves of a substep.
    ProfileZone zone(profiler_, "ragdolls.domains", kRagdollColor, thread);
    auto run_domain = [&](int32_t k, uint32_t worker) {
      const std::span<const int32_t> blocks = domains_.Blocks(k);  // the heaviest first
      const std::span<const int32_t> islands = domains_.IslandsOf(k);
      for (int32_t call = 0; call < calls; ++call) {
        for (const int32_t block : blocks) SolveBlock(block, 1, call == 0);
        for (const int32_t island : islands) contacts_.SolveIslandPositions(island, h, worker);
        for (const int32_t block : blocks) SolveBlock(block, 2, call == 0);
        for (const int32_t island : islands) contacts_.SolveIslandVelocities(island, h, worker);
      }
    };
    ParallelForDealt(settings_.tasks, domains, run_domain, {profiler_, "ragdolls.domains/task", kRagdollColor});
  }
  for (int32_t call = 0; call < (domains >= 2 ? 0 : calls); ++call) {
    ProfileZone substep_zone(profiler_, "ragdolls.substep", kRagdollColor, thread);
    if (pair_count == 0) {
      run(0);
      continue;
    }
    // XPBD order with the pairs inside the substep: positions (the kernel's, then the
    // pairs'), velocities from positions (the kernel's pass), the pairs' velocity pass.
    params.find_static_contacts = call == 0;
    run(1);
    contacts_.SolvePositions(h);
    run(2);
    contacts_.SolveVelocities(h);
  }
}

// Non-finite lanes are reset; sleep; part frames go to the host, alpha of the way from the
// start of the last fixed step (render interpolation): along the path from the last
// stepping frame's start, (n - 1 + alpha) / n of the way over its n fixed steps.
void RagdollSystem::Writeback(float alpha, uint32_t thread) {
  if (frame_.substeps > 0) last_fixed_steps_ = frame_.substeps;
  const float frame_seconds = frame_.frame_seconds;
  const float shown_along =
      alpha >= 1.0f ? 1.0f
                    : (static_cast<float>(last_fixed_steps_ - 1) + alpha) / static_cast<float>(last_fixed_steps_);
  auto task = [&](int32_t begin, int32_t end, uint32_t) {
    for (int32_t i = begin; i < end; ++i) {
      RagdollGroup& g = store_.groups[work_[i].group];
      const RigidBlockView view = g.View(work_[i].block);
      int32_t resets = 0;
      // x * 0 is 0 for every finite x and NaN otherwise: a lane's sum over its state is 0
      // exactly when all of it is finite. Summed row by row (each row holds the block's
      // lanes side by side), one pass over the block instead of a strided one per lane.
      float nonfinite[kMaxRigidBlockLanes] = {};
      for (int32_t j = 0; j < g.part_count; ++j) {
        for (int32_t f = 0; f < kRigidFieldCount; ++f) {
          const float* row = view.Part(f, j);
          for (int32_t l = 0; l < view.lanes; ++l) nonfinite[l] += row[l] * 0.0f;
        }
      }
      for (int32_t l = 0; l < g.block_lanes; ++l) {
        const int32_t lane = work_[i].block * g.block_lanes + l;
        const int32_t owner = lane < g.lanes_enabled ? g.lane_owner[lane] : -1;
        if (owner < 0) continue;
        RagdollSlot& slot = store_.slots[owner];
        const bool finite = nonfinite[l] == 0.0f;
        // Back to the last pose written (the output holds it), at rest; the host's motors
        // and planar mode stay as they were.
        auto reset = [&] {
          ++resets;
          Transform bodies[kMaxRagdollParts];
          for (int32_t j = 0; j < g.part_count; ++j) bodies[j] = Compose(slot.output[j], g.body_in_part[j]);
          g.PlaceBodies(slot.lane, bodies, Vec3{}, Vec3{});
        };
        if (!finite) {
          reset();
          continue;
        }
        if (!slot.asleep) {
          Sleep::UpdateFrameSpeeds(slot, view, l, g, frame_seconds);
          sleep_.Update(slot, view, l, g, frame_seconds);
        }
        auto pose_of = [&](int32_t field, int32_t j) {
          return Transform{{view.Part(field, j)[l], view.Part(field + 1, j)[l], view.Part(field + 2, j)[l]},
                           {view.Part(field + 3, j)[l], view.Part(field + 4, j)[l], view.Part(field + 5, j)[l],
                            view.Part(field + 6, j)[l]},
                           {1, 1, 1}};
        };
        // A kinematic root is shown where its host frame is now, and the other parts'
        // poses relative to it are interpolated under it: a ragdoll hanging from an
        // animated bone does not lag the bone.
        const bool under_root = g.kinematic_root && shown_along < 1.0f;
        const Transform root_now = under_root ? pose_of(kRbXx, 0) : Transform{};
        const Transform root_start = under_root ? pose_of(kRbFrameStartX, 0) : Transform{};
        // Finite state can still overflow once composed (a kinematic root near FLT_MAX, the
        // parts relative to it): such a frame writes nothing and resets, counted.
        Transform shown[kMaxRagdollParts];
        bool shown_finite = true;
        for (int32_t j = 0; j < g.part_count; ++j) {
          Transform body = pose_of(kRbXx, j);
          if (shown_along < 1.0f) {
            Transform start = pose_of(kRbFrameStartX, j);
            if (under_root) start = Relative(root_start, start), body = Relative(root_now, body);
            body.translation = start.translation + (body.translation - start.translation) * shown_along;
            body.rotation = Nlerp(start.rotation, body.rotation, shown_along);
            if (under_root) body = Compose(root_now, body);
          }
          shown[j] = PartFrameOfBody(body, g.body_in_part[j]);
          shown_finite = shown_finite && IsFinite(shown[j]);
        }
        if (!shown_finite) {
          reset();
          continue;
        }
        for (int32_t j = 0; j < g.part_count; ++j) slot.output[j] = shown[j];
        if (!slot.streams.empty()) EmitStreams(slot);
      }
      resets_[i] = resets;
    }
  };
  ProfileZone zone(profiler_, "ragdolls.writeback", kRagdollColor, thread);
  ParallelFor(settings_.tasks, frame_.work_count, 1, task, {profiler_, "ragdolls.writeback/task", kRagdollColor});
}

void RagdollSystem::EndFrame(FrameStats& stats) {
  for (int32_t i = 0; i < frame_.work_count; ++i) {
    stats.reset_non_finite += resets_[i];
    stats.snapped_bad_input += bad_inputs_[i];
  }
  int32_t asleep = 0, frozen = 0;
  for (const RagdollSlot& r : store_.slots) {
    if (!r.enabled || r.internal != kHostRagdoll) continue;  // a free slot is never enabled
    asleep += r.asleep ? 1 : 0;
    frozen += r.frozen ? 1 : 0;
  }
  stats.sleeping_ragdolls = asleep;
  stats.frozen_ragdolls = frozen;
  stats.simulated_ragdolls = frame_.enabled - internal_enabled_ - asleep;
  UpdateDrives(stats);
}

}  // namespace tendon::detail
