// ports/wasm/golden_driver.cpp: the golden-hash scenes of tests/golden_hash_test.cpp, run in
// the WebAssembly build (Node) without GoogleTest, printing each run's folded state hash.
//
// What it does: includes the native test itself (so the scenes, the pile and the fold are
// the same code, not a copy) over a stub of the few GoogleTest macros it uses
// (golden_stub/gtest/gtest.h), then runs the determinism scene, the crate heap and the Jolt
// human piles for the scalar kernel and, in the SIMD build, the SSE4.2 kernels (SIMD128),
// and prints one JSON line per kernel: {"isa", "scene", "heap", "pile"} (hex strings; pile
// null without ../shared/data). ports/wasm/tests/golden.test.mjs compares them with the
// native test's recorded x86-64 table.
//   node --no-experimental-fetch tendon_golden.js [shared data folder]  (Emscripten 3.1.6 would fetch() the .wasm)
// What it does NOT do: judge the hashes (the Node test does), or run on x86-64 natively.
// Threading: one thread (no task system). Memory: the scenes' own.
#include <cstdio>
#include <cstdlib>

#include "../../tests/golden_hash_test.cpp"

int main(int argc, char** argv) {
  using namespace tendon;
  if (argc > 1) setenv("TENDON_SHARED_DATA", argv[1], 1);
  const TaskHooks serial{nullptr, nullptr, nullptr, 1};
  for (Isa isa : {Isa::kScalar, Isa::kSse42}) {
    if (!IsIsaSupported(isa)) continue;
    bool coloured = false;
    const uint64_t scene = test::Fold(test::RunScene(serial, isa, /*render_interpolation=*/false));
    const uint64_t heap = test::Fold(test::RunHeap(serial, &coloured, isa));
    const std::vector<uint64_t> pile = test::RunPile(isa);
    std::printf("{\"isa\": \"%s\", \"scene\": \"%s\", \"heap\": \"%s\", \"pile\": %s%s%s, \"coloured\": %s}\n",
                ToString(isa), test::Hex(scene).c_str(), test::Hex(heap).c_str(), pile.empty() ? "" : "\"",
                pile.empty() ? "null" : test::Hex(test::Fold(pile)).c_str(), pile.empty() ? "" : "\"",
                coloured ? "true" : "false");
  }
  return tendon_golden_stub::Failures() == 0 ? 0 : 1;
}
