// A kernel file that breaks the layering on purpose through a public header: chains may
// not see the World, and tendon/world.h is part of the world layer. tests/CMakeLists.txt
// expects tests/layering.cmake to reject this tree.
#pragma once

#include "kernel/core/fpu.h"
#include "tendon/chain_settings.h"
#include "tendon/world.h"
