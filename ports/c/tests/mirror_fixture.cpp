// ports/c/tests/mirror_fixture.cpp: proves that the C ABI's mirror check (ports/c/c_mirror.h)
// fails the build when a field is missed.
//
// What it does: a small C struct and C++ struct pair, shaped like the real ones (an array
// member, a flattened member struct, a pointer and count, an optional), with its table and
// TENDON_C_CHECK_MIRROR. ports/c/CMakeLists.txt compiles it once per case, -fsyntax-only:
//   TENDON_MIRROR_FIXTURE_CASE 0: the tables match: it must compile (the control: a
//     failure below is the check's, not a broken fixture's or a wrong array count's);
//   1: a field added to the C struct only;  2: a field added to the C++ struct only;
//   3: a field added to a flattened C++ member struct only;  4: a field added to both
//     structs but to no row;  5: a row names a field twice (and so misses one).
// Each failing case passes only when the compiler prints the check's message for it.
// What it does NOT do: run (nothing here is linked), or touch the real tables.
// Threading and memory: none.
#include <cstdint>
#include <optional>
#include <span>

#include "ports/c/c_mirror.h"

#ifndef TENDON_MIRROR_FIXTURE_CASE
#define TENDON_MIRROR_FIXTURE_CASE 0
#endif

extern "C" {
typedef struct FixtureC {
  float gain;
  int32_t enabled;     // bool
  TendonVec3 offset;
  float weights[4];    // an array: four initialisers under brace elision, counted as four
  int32_t has_limit;   // with limit: an optional
  float limit;
  const TendonTransform* frames;
  int32_t frame_count;
  float inner_a;       // the C++ Inner, flattened
  float inner_b;
#if TENDON_MIRROR_FIXTURE_CASE == 1 || TENDON_MIRROR_FIXTURE_CASE == 4
  float added;
#endif
} FixtureC;
}

struct FixtureInner {
  float a = 0;
  float b = 0;
#if TENDON_MIRROR_FIXTURE_CASE == 3
  float added = 0;
#endif
};
struct FixtureCpp {
  float gain = 1;
  bool enabled = true;
  tendon::Vec3 offset{};
  float weights[4] = {};
  std::optional<float> limit{};
  std::span<const tendon::Transform> frames{};
  FixtureInner inner{};
#if TENDON_MIRROR_FIXTURE_CASE == 2 || TENDON_MIRROR_FIXTURE_CASE == 4
  float added = 0;
#endif
};

namespace tendon::ports::capi {

template <>
struct MirrorTable<FixtureC, FixtureInner> : TableOf<FixtureC, FixtureInner> {
  using Rows = RowList<Field<&C::inner_a, &P::a>, Field<&C::inner_b, &P::b>>;
};
TENDON_C_CHECK_FLATTENED(FixtureC, FixtureInner);

template <>
struct MirrorTable<FixtureC, FixtureCpp> : TableOf<FixtureC, FixtureCpp> {
  using Rows = RowList<Field<&C::gain, &P::gain>,
#if TENDON_MIRROR_FIXTURE_CASE == 5
                       Field<&C::gain, &P::gain>,  // and none for enabled: the counts still match
#else
                       Field<&C::enabled, &P::enabled>,
#endif
                       Field<&C::offset, &P::offset>, ByHand<&C::weights, &P::weights>,
                       Optional<&C::has_limit, &C::limit, &P::limit>, SpanOf<&C::frames, &C::frame_count, &P::frames>,
                       Flattened<C, &P::inner>>;
};
TENDON_C_CHECK_MIRROR(FixtureC, FixtureCpp);

// The rows are the conversion: both directions instantiate.
inline void ConvertBothWays(const FixtureC& c, FixtureCpp& cpp, FixtureC& back) {
  MirrorIn(c, cpp);
  MirrorOut(cpp, back);
}

}  // namespace tendon::ports::capi
