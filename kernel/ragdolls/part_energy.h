// kernel/ragdolls/part_energy.h: one ragdoll part's mechanical energy, as tests read it.
//
// What it does: the record WorldAccess::RagdollEnergy fills (RagdollSystem::EnergyForTest)
// so the soak can account for energy part by part and term by term.
// What it does NOT do: anything in a Step; nothing in the World reads it.
// Threading and memory: a plain value.
#pragma once

#include "tendon/math.h"

namespace tendon::detail {

// One part's mechanical energy (J), for the soak's energy accounting: translational and
// rotational kinetic energy, and potential energy in the World's gravity (zero at the
// origin). kinematic: the part's motion is the host's (a kinematic root), not the solver's.
struct PartEnergy {
  double linear = 0, angular = 0, potential = 0;
  float mass = 0;
  bool kinematic = false;
  Vec3 centre{};
};

}  // namespace tendon::detail
