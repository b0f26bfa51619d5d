// ports/gltf/tinygltf_impl.cpp: tinygltf's implementation, compiled once, with the same
// configuration as every includer (ports/gltf/tinygltf.h). Built without Tendon's warning
// flags: it is a Debian package's code, not ours.
//
// No iostreams: tinygltf builds a few error messages with std::stringstream, which would
// link libc++'s iostreams (locales, stream buffers, facets) into the WebAssembly module for
// nothing else. Its implementation is compiled with `std` spelt `tendon_tinygltf_std`, a
// namespace that sees all of std (a using-directive) and declares its own `stringstream`
// and `endl` first, which qualified lookup then prefers: a string builder for text and
// numbers, written as an ostream writes them (integers in decimal, floating point as %g).
// The declarations (tinygltf.h's first part, its classes) are compiled before, with the
// real std, as every other includer sees them. The writers that take a std::ostream still
// name the real one; nothing here calls them, so the linker drops them.
#include "ports/gltf/tinygltf.h"

// Every header the implementation part includes, first, with the real std.
#include <algorithm>
#include <cstdio>
#include <fstream>  // its file writers name std::ofstream even with TINYGLTF_NO_FS
#include <ostream>
#include <sstream>
#include <string>
#include <type_traits>

#include <nlohmann/json.hpp>

namespace tendon_tinygltf_std {
using namespace ::std;

class stringstream {
 public:
  stringstream& operator<<(const ::std::string& text) {
    text_ += text;
    return *this;
  }
  stringstream& operator<<(const char* text) {
    text_ += text != nullptr ? text : "(null)";
    return *this;
  }
  stringstream& operator<<(char c) {
    text_ += c;
    return *this;
  }
  template <typename T>
    requires ::std::is_arithmetic_v<T>
  stringstream& operator<<(T value) {
    char digits[64];
    if constexpr (::std::is_floating_point_v<T>) {
      ::std::snprintf(digits, sizeof(digits), "%g", static_cast<double>(value));
    } else if constexpr (::std::is_signed_v<T>) {
      ::std::snprintf(digits, sizeof(digits), "%lld", static_cast<long long>(value));
    } else {
      ::std::snprintf(digits, sizeof(digits), "%llu", static_cast<unsigned long long>(value));
    }
    text_ += digits;
    return *this;
  }
  ::std::string str() const { return text_; }

 private:
  ::std::string text_;
};

// `<< std::endl`: a new line (there is nothing to flush).
struct EndOfLine {};
inline constexpr EndOfLine endl{};
inline stringstream& operator<<(stringstream& out, EndOfLine) { return out << '\n'; }
inline ::std::ostream& operator<<(::std::ostream& out, EndOfLine) { return out << '\n'; }

}  // namespace tendon_tinygltf_std

// As tinygltf.h includes it: asserts off (see there).
#ifndef NDEBUG
#define TENDON_TINYGLTF_IMPL_RESTORE_ASSERT
#define NDEBUG
#endif
#include <cassert>

#define TINYGLTF_IMPLEMENTATION
#define std tendon_tinygltf_std
#include <tiny_gltf.h>
#undef std

#ifdef TENDON_TINYGLTF_IMPL_RESTORE_ASSERT
#undef NDEBUG
#undef TENDON_TINYGLTF_IMPL_RESTORE_ASSERT
#include <cassert>
#endif
