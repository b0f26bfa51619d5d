// bench/bench_util.h: what the benchmark files share.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tendon/errors.h"

namespace tendon::bench {

// The worker counts benchmarks with a /workers:N axis register: 1 and 2, or 1..N with
// TENDON_BENCH_WORKERS=N (bench/run-matrix.sh sets it to the machine's core count).
inline std::vector<int> WorkerCounts() {
  int most = 2;
  if (const char* env = std::getenv("TENDON_BENCH_WORKERS"); env != nullptr) {
    const int n = std::atoi(env);
    if (n >= 1 && n <= 1024) most = n;
  }
  std::vector<int> counts;
  for (int w = 1; w <= most; ++w) counts.push_back(w);
  return counts;
}

// A scene's set-up call that cannot fail unless the benchmark itself is wrong: a failure
// prints the error and aborts, so a broken scene is never timed.
inline void MustSucceed(const Error& e) {
  if (e.ok()) return;
  std::fprintf(stderr, "tendon_bench: scene set-up failed: %s %s: %s\n", ToString(e.code), e.field.c_str(),
               e.message.c_str());
  std::abort();
}

}  // namespace tendon::bench
