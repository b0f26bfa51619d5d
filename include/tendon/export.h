// tendon/export.h: TENDON_API, what a shared build of Tendon exports.
//
// What it does: marks the public API's non-inline classes and functions. Tendon's objects
// are compiled with hidden visibility, so a shared libtendon (CMake option TENDON_SHARED)
// exports these and nothing else: no kernel internals, no xsimd or oneTBB symbols, no
// standard-library instantiations. A static build links as it always did.
// What it does NOT do: anything for the C ABI (tendon_c.h has TENDON_C_API).
// Threading and memory: none.
#pragma once

// TENDON_API marks libtendon's API, TENDON_TBB_API libtendon_tbb's (each library exports
// its own and imports the other's on Windows).
#if defined(_WIN32) && defined(TENDON_SHARED_LIBRARY)
#if defined(TENDON_BUILDING)
#define TENDON_API __declspec(dllexport)
#else
#define TENDON_API __declspec(dllimport)
#endif
#if defined(TENDON_TBB_BUILDING)
#define TENDON_TBB_API __declspec(dllexport)
#else
#define TENDON_TBB_API __declspec(dllimport)
#endif
#elif defined(__GNUC__) || defined(__clang__)
#define TENDON_API __attribute__((visibility("default")))
#define TENDON_TBB_API __attribute__((visibility("default")))
#else
#define TENDON_API
#define TENDON_TBB_API
#endif
