// A kernel file that keeps to its layer (core sees only itself and include/tendon).
#pragma once

#include "kernel/core/fpu.h"
#include "tendon/math.h"
