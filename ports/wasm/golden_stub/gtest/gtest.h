// ports/wasm/golden_stub/gtest/gtest.h: the few GoogleTest macros the golden-hash scenes use
// (tests/test_util.h, tests/determinism_scenes.h, tests/golden_hash_test.cpp), for
// ports/wasm/golden_driver.cpp, which runs those scenes in Node without GoogleTest.
//
// What it does: EXPECT_* / ASSERT_* print the failed condition and count it (the driver
// exits non-zero when any failed); TEST defines a plain function; GTEST_SKIP returns.
// What it does NOT do: anything else of GoogleTest. Threading: one thread. Memory: none.
#pragma once

#include <cstdio>
#include <sstream>

namespace tendon_golden_stub {

inline int& Failures() {
  static int failures = 0;
  return failures;
}

// Collects a failure's streamed message and prints it when the statement ends.
class Failure {
 public:
  Failure(const char* file, int line, const char* what) { text_ << file << ":" << line << ": " << what << " "; }
  ~Failure() {
    ++Failures();
    std::fprintf(stderr, "golden driver: check failed: %s\n", text_.str().c_str());
  }
  template <class T>
  Failure& operator<<(const T& value) {
    text_ << value;
    return *this;
  }

 private:
  std::ostringstream text_;
};

struct Ignore {
  template <class T>
  Ignore& operator<<(const T&) {
    return *this;
  }
};

}  // namespace tendon_golden_stub

#define TENDON_STUB_CHECK(cond, text) \
  if (cond) {                         \
  } else                              \
    ::tendon_golden_stub::Failure(__FILE__, __LINE__, text)
#define EXPECT_TRUE(c) TENDON_STUB_CHECK((c), #c)
#define EXPECT_EQ(a, b) TENDON_STUB_CHECK((a) == (b), #a " == " #b)
#define EXPECT_GE(a, b) TENDON_STUB_CHECK((a) >= (b), #a " >= " #b)
#define ASSERT_TRUE(c) EXPECT_TRUE(c)
#define ASSERT_EQ(a, b) EXPECT_EQ(a, b)
#define TEST(suite, name) [[maybe_unused]] static void suite##_##name()
#define GTEST_SKIP() \
  if (true) {        \
    return;          \
  } else             \
    ::tendon_golden_stub::Ignore()
