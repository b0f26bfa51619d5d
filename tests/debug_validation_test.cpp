// The debug-validation build (TENDON_DEBUG_VALIDATION, issue 11): a host buffer freed
// behind Tendon's back is named, with its instance, before anything touches it. The host
// bug itself (use after free) is only detectable under AddressSanitizer or Valgrind, so
// these run in CI's ASan build, which turns the option on; elsewhere they skip.
#include <memory>
#include <vector>

#include "kernel/core/host_buffers.h"
#include "test_util.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TENDON_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define TENDON_TEST_ASAN 1
#endif

namespace tendon::test {
namespace {

#if defined(TENDON_TEST_ASAN)
constexpr bool kCanSeeFreedMemory = detail::kDebugValidation;
#else
constexpr bool kCanSeeFreedMemory = false;
#endif

#define TENDON_NEED_VALIDATION() \
  if (!kCanSeeFreedMemory) GTEST_SKIP() << "needs TENDON_DEBUG_VALIDATION in an AddressSanitizer build"

TEST(DebugValidationDeathTest, AChainOutputFreedBehindTendonsBackIsNamedAtTheNextStep) {
  TENDON_NEED_VALIDATION();
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        auto w = MakeWorld();
        const ChainArchetypeSettings s = Strand(4);
        const ChainArchetypeId a = w->BuildChainArchetype(s).value();
        auto host = std::make_unique<HostChain>(s);
        (void)w->BindChain(host->Binding(a)).value();
        w->Step(1.0f / 60.0f);
        host->output = std::vector<Transform>();  // the host's vector reallocated away
        w->Step(1.0f / 60.0f);
      },
      "chain 0 \\(generation 1\\): its host buffer output_local .* is freed or unallocated memory");
}

TEST(DebugValidationDeathTest, ARagdollOutputFreedBeforeUnbindIsNamed) {
  TENDON_NEED_VALIDATION();
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        auto w = MakeWorld();
        RagdollSettings s;
        s.parts.push_back(PartSettings{});
        const RagdollArchetypeId a = w->BuildRagdollArchetype(s).value();
        auto out = std::make_unique<std::vector<Transform>>(1);
        RagdollBinding b;
        b.archetype = a;
        b.output_parts = *out;
        const RagdollId id = w->BindRagdoll(b).value();
        out.reset();
        (void)w->UnbindRagdoll(id);
      },
      "ragdoll 0 \\(generation 1\\): its host buffer output_parts");
}

// Live buffers pass: the checks cost a scan per Step and say nothing.
TEST(DebugValidation, LiveBuffersPassEveryCheck) {
  auto w = MakeWorld();
  const ChainArchetypeSettings s = Strand(4);
  const ChainArchetypeId a = w->BuildChainArchetype(s).value();
  HostChain host(s);
  const ChainId id = w->BindChain(host.Binding(a)).value();
  for (int f = 0; f < 10; ++f) w->Step(1.0f / 60.0f);
  EXPECT_EQ(w->UnbindChain(id).code, ErrorCode::kNone);
}

}  // namespace
}  // namespace tendon::test
