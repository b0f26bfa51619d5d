// ports/json/json.h: a small JSON reader for asset loaders (tendon_ports).
//
// What it does: parses a UTF-8 JSON text into a tree of Values (null, bool, number,
// string, array, object) and reports the byte offset of the first syntax error.
// What it does NOT do: write JSON, unescape \u sequences beyond the basic plane into
// UTF-8 pairs (they are kept as written), or stream. Loaders use it at load time only.
// Threading: a Value is a plain tree; parse on any thread. Memory: allocates the tree.
#pragma once

#include <cstddef>
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
