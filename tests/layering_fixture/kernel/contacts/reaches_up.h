// A kernel file that breaks the layering on purpose: contacts may not see ragdolls (above
// it). tests/CMakeLists.txt expects tests/layering.cmake to reject this tree.
#pragma once

#include "kernel/core/parallel.h"
#include "kernel/ragdolls/ragdoll_system.h"
