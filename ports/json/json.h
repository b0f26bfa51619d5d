// ports/json/json.h: the loaders' tolerant view of a JSON document (tendon_ports, not
// installed), parsed by nlohmann-json (Debian nlohmann-json3-dev).
//
// What it does: Parse and ParseFile run nlohmann-json's parser (a syntax error, or a number
// past double such as 1e999, is an error with its byte offset) and hand back a Value: a
// read-only view in which a missing member or element is a null Value, so a loader reads
// deep paths without checking each step, and converts numbers only through Float (past
// float: +-infinity, which the builders refuse by name) and Int (an integer in a range,
// else false) so that no out-of-range conversion can happen.
// What it does NOT do: write JSON, or own anything but through its ParseResult: a Value is
// valid while the ParseResult it came from (or a copy of it) lives.
// Threading: read-only; parse on any thread. Memory: the document, shared by copies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace tendon::json {

class Value {
 public:
  Value() : j_(&NullJson()) {}
  explicit Value(const nlohmann::json& j) : j_(&j) {}

  bool IsNull() const { return j_->is_null(); }
  bool IsNumber() const { return j_->is_number(); }
  bool IsString() const { return j_->is_string(); }
  bool IsArray() const { return j_->is_array(); }
  bool IsObject() const { return j_->is_object(); }

  double Number(double fallback = 0.0) const { return j_->is_number() ? j_->get<double>() : fallback; }
  // The number as a float: beyond float's range it is +-infinity (which every builder then
  // refuses by name), never an out-of-range conversion; `fallback` when not a number.
  float Float(float fallback = 0.0f) const {
    if (!j_->is_number()) return fallback;
    const double d = j_->get<double>();
    if (d > 3.4028234663852886e38) return std::numeric_limits<float>::infinity();
    if (d < -3.4028234663852886e38) return -std::numeric_limits<float>::infinity();
    return static_cast<float>(d);
  }
  // An integral number within [lo, hi): true, with *out set; false for anything else (a
  // fraction, a number out of range, not a number). Loaders index with this only.
  bool Int(int32_t lo, int32_t hi, int32_t* out) const {
    if (!j_->is_number()) return false;
    const double d = j_->get<double>();
    if (!(d >= lo && d < hi) || d != static_cast<double>(static_cast<int64_t>(d))) return false;
    *out = static_cast<int32_t>(d);
    return true;
  }
  bool Bool(bool fallback = false) const { return j_->is_boolean() ? j_->get<bool>() : fallback; }
  // The string, or an empty one when this is not a string.
  const std::string& String() const {
    static const std::string empty;
    return j_->is_string() ? j_->get_ref<const std::string&>() : empty;
  }
  std::size_t Size() const { return j_->is_array() || j_->is_object() ? j_->size() : 0; }
  // Element i of an array, or a null value.
  Value operator[](std::size_t i) const { return j_->is_array() && i < j_->size() ? Value((*j_)[i]) : Value(); }
  // The member `key` of an object, or a null value.
  Value operator[](std::string_view key) const {
    if (!j_->is_object()) return Value();
    const auto it = j_->find(key);
    return it == j_->end() ? Value() : Value(*it);
  }
  bool Has(std::string_view key) const { return j_->is_object() && j_->find(key) != j_->end(); }

 private:
  static const nlohmann::json& NullJson() {
    static const nlohmann::json null;
    return null;
  }
  const nlohmann::json* j_;
};

struct ParseResult {
  std::shared_ptr<const nlohmann::json> document{};
  Value value{};  // a view into *document
  bool ok = false;
  std::size_t error_offset = 0;  // the index of the first bad byte (the text's size at its end)
  std::string error;
};

ParseResult Parse(std::string_view text);
// Reads and parses a file; error says why when it cannot be read.
ParseResult ParseFile(const std::string& path);

}  // namespace tendon::json
