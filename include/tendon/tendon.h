// tendon/tendon.h: the umbrella header. Tendon simulates secondary motion (verlet chains
// and accessory pendulums) and ragdolls (rigid parts, characters) for game engines; see
// world.h for the frame and README.md for an overview. Includes neither oneTBB nor xsimd.
#pragma once

#include "tendon/chain_settings.h"
#include "tendon/contact_events.h"
#include "tendon/character.h"
#include "tendon/debug_draw.h"
#include "tendon/device_calibration.h"
#include "tendon/device_profile.h"
#include "tendon/errors.h"
#include "tendon/host_body.h"
#include "tendon/ids.h"
#include "tendon/isa.h"
#include "tendon/landing.h"
#include "tendon/math.h"
#include "tendon/part_drive.h"
#include "tendon/pendulum_settings.h"
#include "tendon/pose_layout.h"
#include "tendon/profiler_hooks.h"
#include "tendon/query.h"
#include "tendon/ragdoll_measure.h"
#include "tendon/ragdoll_settings.h"
#include "tendon/stats.h"
#include "tendon/task_hooks.h"
#include "tendon/trace.h"
#include "tendon/world.h"
#include "tendon/world_settings.h"
