// tests/fuzz/fuzz_loaders.cpp: every file loader in ports/ over arbitrary bytes. A loader
// may refuse a file (with a reason), never crash, hang, allocate absurdly or hit undefined
// behaviour (built with AddressSanitizer and UndefinedBehaviorSanitizer). The first byte
// picks the loader; the rest is the file. Seeds: tests/fuzz/corpus/loaders and the real
// assets in ../shared/data.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "fuzz_input.h"
#include "ports/jolt_human/jolt_human.h"
#include "ports/json/json.h"
#include "ports/vrm/vrm_skeleton.h"

namespace {

// The loaders read paths: one scratch file per process.
const std::string& ScratchPath() {
  static const std::string path = "/tmp/tendon_fuzz_loaders_" + std::to_string(getpid());
  return path;
}

void WriteScratch(const uint8_t* data, std::size_t size) {
  std::FILE* f = std::fopen(ScratchPath().c_str(), "wb");
  if (f == nullptr) return;
  if (size > 0) std::fwrite(data, 1, size, f);
  std::fclose(f);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const uint8_t which = data[0] % 4;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  using namespace tendon;
  switch (which) {
    case 0: {
      const json::ParseResult parsed = json::Parse(text);
      fuzz::Require(parsed.ok || !parsed.error.empty(), "a JSON parse failure says why");
      break;
    }
    case 1: {
      WriteScratch(data + 1, size - 1);
      auto r = ports::LoadJoltHumanRagdoll(ScratchPath(), (data[0] & 4) != 0);
      fuzz::Require(r.ok() || !r.error().message.empty(), "a ragdoll file refused says why");
      break;
    }
    case 2: {
      WriteScratch(data + 1, size - 1);
      auto r = ports::LoadJoltAnimation(ScratchPath());
      if (r.ok()) {
        const ports::JoltAnimation& a = r.value();
        fuzz::Require(a.parents.size() == a.joints.size(), "one parent per joint");
        for (std::size_t j = 0; j < a.parents.size(); ++j)
          fuzz::Require(a.parents[j] < static_cast<int32_t>(j), "parents come first");
        fuzz::Require(a.keys.size() == a.joints.size() * a.key_times.size(), "keys sized from the file");
        std::vector<Transform> pose(a.joints.size());
        ports::SampleJoltAnimation(a, 0.5f, pose);
      } else {
        fuzz::Require(!r.error().message.empty(), "an animation refused says why");
      }
      break;
    }
    default: {
      WriteScratch(data + 1, size - 1);
      auto r = ports::LoadVrmSkeleton(ScratchPath());
      if (r.ok()) {
        const SkeletonSettings& s = r.value().skeleton;
        fuzz::Require(s.names.size() == s.parents.size() && s.parents.size() == s.rest_local.size(), "one of each per bone");
        for (std::size_t b = 0; b < s.parents.size(); ++b) fuzz::Require(s.parents[b] < static_cast<int32_t>(b), "parents first");
      }
      break;
    }
  }
  return 0;
}
