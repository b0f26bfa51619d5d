// ports/jolt_human/jolt_human.h: RagdollSettings from the Jolt "Human" ragdoll JSON
// (../shared/data/jolt-human/ragdoll.json; see its README for the format).
//
// What it does: maps each part's rest transform, shape, mass, material and swing-twist
// joint (anchor, parent and child axes, cone and twist limits, friction, motors) onto
// Tendon's settings. Jolt states torques in N m; Tendon's are per kg of the child part,
// so they are divided by the part's mass. Angles become degrees.
// What it does NOT do: compound shapes. The two neck parts are compounds of two capsules;
// they become one box bounding both (their mass is kept from the file).
// Threading: none. Memory: allocates the settings.
#pragma once

#include <string>

#include "tendon/errors.h"
#include "tendon/ragdoll_settings.h"

namespace tendon::ports {

// Reads `path`; on failure the error's message says what was wrong with the file.
Result<RagdollSettings> LoadJoltHumanRagdoll(const std::string& path);

}  // namespace tendon::ports
