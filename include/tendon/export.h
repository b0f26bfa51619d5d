// tendon/export.h: TENDON_API, what a shared build of Tendon exports.
//
// What it does: marks the public API's non-inline classes and functions. Tendon's objects
// are compiled with hidden visibility, so a shared libtendon (CMake option TENDON_SHARED)
// exports these and nothing else: no kernel internals, no xsimd or oneTBB symbols, no
// standard-library instantiations. A static build links as it always did.
// What it does NOT do: anything for the C ABI (tendon_c.h has TENDON_C_API).
// Threading and memory: none.
#pragma once

#if defined(_WIN32) && defined(TENDON_SHARED_LIBRARY)
#if defined(TENDON_BUILDING)
#define TENDON_API __declspec(dllexport)
#else
#define TENDON_API __declspec(dllimport)
#endif
#elif defined(__GNUC__) || defined(__clang__)
#define TENDON_API __attribute__((visibility("default")))
#else
#define TENDON_API
#endif
