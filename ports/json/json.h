// ports/json/json.h: how the loaders read files and JSON (tendon_ports, not installed):
// files read without exceptions, JSON parsed by nlohmann-json (Debian nlohmann-json3-dev)
// with the place of a syntax error, and a strict reader that names the JSON path of every
// member it refuses.
//
// What it does:
// - ReadFile: a regular file's bytes, or why not (missing, a directory, not a regular
//   file, too large, unreadable), with the system's reason (std::error_code's message).
// - Parse / ParseFile: nlohmann-json's parser. A syntax error, or a number past double such
//   as 1e999, is an error at the index of the bad byte (a number's first byte), with its
//   line and column (1-based; the column counts bytes).
// - ParseFailure: a failed ParseFile as an Error: kIo with the system's reason when the
//   file cannot be read, else "<file>:<line>:<column>: <why> (byte <offset>)".
// - Reader: required members and elements read with their type checked; a missing member
//   or a wrong type is an error "<file>: <path>: <why>" ("ragdoll.json: parts[3].position[1]:
//   expected a number, got a string"); numbers past float are refused by name, never
//   converted out of range. Optional members are read only where the caller says a member
//   is optional (OptionalFloat, Has), and are type-checked when present.
// - Value: a read-only browsing view where a missing member is null (kept for tests and
//   tools that poke at a document); loaders use Reader, never Value.
// What it does NOT do: write JSON, or throw: every exception of nlohmann-json, the
// filesystem and the standard library is caught inside (std::bad_alloc becomes an error
// too). A Value or Node is valid while the document it came from lives.
// Threading: none; independent calls may run concurrently. Memory: the document, shared by
// copies of its ParseResult.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tendon/errors.h"

namespace tendon::json {

// Files past this are refused before they are read (the loaders' inputs are megabytes).
inline constexpr std::size_t kMaxFileBytes = std::size_t{1} << 31;

// The bytes of the regular file `path`: true, or false with *why saying why ("cannot be
// read: No such file or directory", "is a directory", "is not a regular file"). Never throws.
bool ReadFile(const std::string& path, std::string* bytes, std::string* why, std::size_t max_bytes = kMaxFileBytes);

// An I/O failure as an Error: kIo, field "file", message "<path>: <why>".
Error IoError(const std::string& path, const std::string& why);

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
  bool io_error = false;         // ParseFile: the file could not be read (error says why)
  std::size_t error_offset = 0;  // the index of the first bad byte (the text's size at its end)
  int32_t error_line = 0;        // 1-based line and column (in bytes) of error_offset; 0 for an I/O error
  int32_t error_column = 0;
  // Parse: "<line>:<column>: <why> (byte <offset>)". ParseFile: the path first, once
  // ("<path>:<line>:<column>: ..."), or "<path>: cannot be read: <reason>".
  std::string error;
};

ParseResult Parse(std::string_view text);
ParseResult ParseFile(const std::string& path);
// A failed ParseFile as an Error (kIo for an I/O failure, else kOutOfRange with field
// "json"); the message is r.error.
Error ParseFailure(const ParseResult& r);

// A value in a document and its JSON path ("parts[3].position"; "" is the document).
struct Node {
  const nlohmann::json* json = nullptr;  // null after a failed read
  std::string path{};
  bool ok() const { return json != nullptr; }
};

// Strict reads that keep the first failure. After a failure every read returns a default
// and a null Node, so a loader reads a whole part and checks ok() once. `source` names the
// file in messages.
class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}
  static Node Root(const nlohmann::json& document) { return Node{&document, ""}; }

  bool ok() const { return error_.code == ErrorCode::kNone; }
  const Error& error() const { return error_; }
  // Refuses `at` for a reason of the caller's (the first failure is kept).
  void Fail(const Node& at, const std::string& why, ErrorCode code = ErrorCode::kOutOfRange);
  void Fail(const std::string& path, const std::string& why, ErrorCode code = ErrorCode::kOutOfRange);

  // A required member: missing, or `object` not an object, is an error.
  Node Member(const Node& object, std::string_view key);
  // Whether `object` has `key` with a value other than null (an object is required).
  bool Has(const Node& object, std::string_view key);
  // An array (of at least `min_size` elements): its size, else an error and 0.
  std::size_t ArraySize(const Node& array, std::size_t min_size = 0);
  // Element i of an array (ArraySize first).
  Node Element(const Node& array, std::size_t i);

  double Number(const Node& v);
  // A number within float's range (past it: refused, naming the value).
  float Float(const Node& v);
  float Float(const Node& object, std::string_view key) { return Float(Member(object, key)); }
  // An optional number member: `fallback` when absent or null, else a float as above.
  float OptionalFloat(const Node& object, std::string_view key, float fallback);
  // An integer within [lo, hi).
  int32_t Int(const Node& v, int32_t lo, int32_t hi);
  std::string String(const Node& v);
  bool Bool(const Node& v);

  // "<what> as JSON spells it, with an article": "a string", "an object", "null".
  static const char* TypeName(const nlohmann::json& v);

 private:
  static std::string Join(const std::string& path, std::string_view key);
  std::string source_;
  Error error_{};
};

}  // namespace tendon::json
