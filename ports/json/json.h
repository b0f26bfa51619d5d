// ports/json/json.h: a small JSON reader for asset loaders (tendon_ports).
//
// What it does: parses a UTF-8 JSON text into a tree of Values (null, bool, number,
// string, array, object) and reports the byte offset of the first syntax error.
// What it does NOT do: write JSON, unescape \u sequences beyond the basic plane into
// UTF-8 pairs (they are kept as written), or stream. Loaders use it at load time only.
// Threading: a Value is a plain tree; parse on any thread. Memory: allocates the tree.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tendon::json {

class Value {
 public:
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };

  Kind kind() const { return kind_; }
  bool IsNull() const { return kind_ == Kind::kNull; }
  bool IsNumber() const { return kind_ == Kind::kNumber; }
  bool IsString() const { return kind_ == Kind::kString; }
  bool IsArray() const { return kind_ == Kind::kArray; }
  bool IsObject() const { return kind_ == Kind::kObject; }

  double Number(double fallback = 0.0) const { return kind_ == Kind::kNumber ? number_ : fallback; }
  // The number as a float: beyond float's range it is +-infinity (which every builder then
  // refuses by name), never an out-of-range conversion; `fallback` when not a number.
  float Float(float fallback = 0.0f) const {
    if (kind_ != Kind::kNumber) return fallback;
    if (number_ > 3.4028234663852886e38) return std::numeric_limits<float>::infinity();
    if (number_ < -3.4028234663852886e38) return -std::numeric_limits<float>::infinity();
    return static_cast<float>(number_);
  }
  // An integral number within [lo, hi): true, with *out set; false for anything else (a
  // fraction, a number out of range, not a number). Loaders index with this only.
  bool Int(int32_t lo, int32_t hi, int32_t* out) const {
    if (kind_ != Kind::kNumber || !(number_ >= lo && number_ < hi) || number_ != static_cast<double>(static_cast<int64_t>(number_)))
      return false;
    *out = static_cast<int32_t>(number_);
    return true;
  }
  bool Bool(bool fallback = false) const { return kind_ == Kind::kBool ? boolean_ : fallback; }
  const std::string& String() const { return string_; }
  const std::vector<Value>& Array() const { return array_; }
  std::size_t Size() const { return kind_ == Kind::kArray ? array_.size() : object_.size(); }
  const Value& operator[](std::size_t i) const { return i < array_.size() ? array_[i] : Null(); }
  // The member `key` of an object, or a null value.
  const Value& operator[](std::string_view key) const {
    auto it = object_.find(std::string(key));
    return it == object_.end() ? Null() : it->second;
  }
  bool Has(std::string_view key) const { return object_.count(std::string(key)) != 0; }

  static const Value& Null() {
    static const Value null;
    return null;
  }

 private:
  friend class Parser;
  Kind kind_ = Kind::kNull;
  bool boolean_ = false;
  double number_ = 0.0;
  std::string string_;
  std::vector<Value> array_;
  std::map<std::string, Value> object_;
};

struct ParseResult {
  Value value;
  bool ok = false;
  std::size_t error_offset = 0;  // byte offset of the first error
  std::string error;
};

ParseResult Parse(std::string_view text);
// Reads and parses a file; error says why when it cannot be read.
ParseResult ParseFile(const std::string& path);

}  // namespace tendon::json
