// ports/json/json.cpp: file reading, parsing and strict reading (see json.h).
#include "ports/json/json.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <new>
#include <system_error>
#include <utility>

namespace tendon::json {

namespace {

// nlohmann-json's DOM builder, but a parse error is recorded (where, and why) instead of
// thrown: the DOM parser's own exceptions carry no position for a number overflow (1e999),
// which nlohmann reports through the SAX interface only.
class LocatingSax {
 public:
  using Json = nlohmann::json;
  explicit LocatingSax(Json& root) : dom_(root, /*allow_exceptions=*/false) {}

  bool null() { return dom_.null(); }
  bool boolean(bool v) { return dom_.boolean(v); }
  bool number_integer(Json::number_integer_t v) { return dom_.number_integer(v); }
  bool number_unsigned(Json::number_unsigned_t v) { return dom_.number_unsigned(v); }
  bool number_float(Json::number_float_t v, const Json::string_t& s) { return dom_.number_float(v, s); }
  bool string(Json::string_t& v) { return dom_.string(v); }
  bool binary(Json::binary_t& v) { return dom_.binary(v); }
  bool start_object(std::size_t n) { return dom_.start_object(n); }
  bool key(Json::string_t& k) { return dom_.key(k); }
  bool end_object() { return dom_.end_object(); }
  bool start_array(std::size_t n) { return dom_.start_array(n); }
  bool end_array() { return dom_.end_array(); }
  template <class Exception>
  bool parse_error(std::size_t bytes_read, const std::string& token, const Exception& e) {
    failed = true;
    bytes_read_ = bytes_read;
    token_size_ = token.size();
    overflow_ = e.id == 406;  // out_of_range.406: a number past double, reported after its token
    what = e.what();
    return false;
  }

  // The index of the bad byte: nlohmann counts the bytes read, the bad one included (so one
  // past it); a number overflow is reported at the end of the number, so at its first byte.
  std::size_t Offset(std::size_t text_size) const {
    std::size_t at = overflow_ ? bytes_read_ - std::min(bytes_read_, token_size_) : (bytes_read_ > 0 ? bytes_read_ - 1 : 0);
    return std::min(at, text_size);
  }

  bool failed = false;
  std::string what;

 private:
  nlohmann::detail::json_sax_dom_parser<Json> dom_;
  std::size_t bytes_read_ = 0, token_size_ = 0;
  bool overflow_ = false;
};

// nlohmann's message without its "[json.exception.parse_error.101] parse error at line 1,
// column 7: " prefix (the line and column are ours, from the offset).
std::string Reason(const std::string& what) {
  std::string why = what;
  if (why.rfind("[json.exception.", 0) == 0) {
    const std::size_t close = why.find("] ");
    if (close != std::string::npos) why.erase(0, close + 2);
  }
  if (why.rfind("parse error", 0) == 0) {
    const std::size_t colon = why.find(": ");
    if (colon != std::string::npos) why.erase(0, colon + 2);
  }
  if (why.rfind("number overflow", 0) == 0) why += " (past the range of a double)";
  return why.empty() ? "not JSON" : why;
}

void LineAndColumn(std::string_view text, std::size_t offset, int32_t* line, int32_t* column) {
  int64_t l = 1, c = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++l;
      c = 1;
    } else {
      ++c;
    }
  }
  *line = static_cast<int32_t>(std::min<int64_t>(l, INT32_MAX));
  *column = static_cast<int32_t>(std::min<int64_t>(c, INT32_MAX));
}

}  // namespace

bool ReadFile(const std::string& path, std::string* bytes, std::string* why, std::size_t max_bytes) {
  try {
    std::error_code ec;
    const std::filesystem::file_status status = std::filesystem::status(path, ec);
    if (ec) {
      *why = "cannot be read: " + ec.message();
      return false;
    }
    if (std::filesystem::is_directory(status)) {
      *why = "cannot be read: " + std::make_error_code(std::errc::is_a_directory).message();
      return false;
    }
    // A FIFO or a device (/dev/zero) could be read forever: only regular files.
    if (!std::filesystem::is_regular_file(status)) {
      *why = "cannot be read: not a regular file";
      return false;
    }
    const std::uintmax_t size = std::filesystem::file_size(path, ec);
    if (ec) {
      *why = "cannot be read: " + ec.message();
      return false;
    }
    if (size > max_bytes) {
      *why = "is " + std::to_string(size) + " bytes, more than the " + std::to_string(max_bytes) + " a loader reads";
      return false;
    }
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) {
      *why = "cannot be read: " + std::generic_category().message(errno);
      return false;
    }
    bytes->clear();
    bytes->reserve(static_cast<std::size_t>(size));
    char chunk[1 << 16];
    std::size_t got = 0;
    // Read to the end (the file may have grown since it was measured), within max_bytes.
    while ((got = std::fread(chunk, 1, sizeof chunk, f)) > 0 && bytes->size() + got <= max_bytes) bytes->append(chunk, got);
    const bool failed = std::ferror(f) != 0;
    const int error = errno;
    std::fclose(f);
    if (failed) {
      *why = "cannot be read: " + std::generic_category().message(error);
      return false;
    }
    if (got > 0) {
      *why = "grew past the " + std::to_string(max_bytes) + " bytes a loader reads";
      return false;
    }
    return true;
  } catch (const std::bad_alloc&) {
    *why = "cannot be read: out of memory";
  } catch (const std::exception& e) {
    *why = std::string("cannot be read: ") + e.what();
  }
  return false;
}

Error IoError(const std::string& path, const std::string& why) {
  return Error{ErrorCode::kIo, -1, "file", path + ": " + why};
}

ParseResult Parse(std::string_view text) {
  ParseResult r;
  try {
    auto document = std::make_shared<nlohmann::json>();
    LocatingSax sax(*document);
    const bool parsed = nlohmann::json::sax_parse(text, &sax, nlohmann::json::input_format_t::json, /*strict=*/true);
    if (parsed && !sax.failed) {
      r.document = document;
      r.value = Value(*document);
      r.ok = true;
      return r;
    }
    r.error_offset = sax.Offset(text.size());
    LineAndColumn(text, r.error_offset, &r.error_line, &r.error_column);
    r.error = std::to_string(r.error_line) + ":" + std::to_string(r.error_column) + ": " + Reason(sax.what) + " (byte " +
              std::to_string(r.error_offset) + ")";
  } catch (const std::bad_alloc&) {
    r = ParseResult{};
    r.error = "out of memory while parsing";
  } catch (const std::exception& e) {  // nlohmann's own (an object too large), never out of Parse
    r = ParseResult{};
    r.error = Reason(e.what());
  }
  return r;
}

ParseResult ParseFile(const std::string& path) {
  std::string text, why;
  if (!ReadFile(path, &text, &why)) {
    ParseResult r;
    r.io_error = true;
    r.error = path + ": " + why;
    return r;
  }
  ParseResult r = Parse(text);
  if (!r.ok) r.error = path + ":" + r.error;
  return r;
}

Error ParseFailure(const ParseResult& r) {
  return Error{r.io_error ? ErrorCode::kIo : ErrorCode::kOutOfRange, -1, r.io_error ? "file" : "json", r.error};
}

// ---- Reader ----

const char* Reader::TypeName(const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::null: return "null";
    case nlohmann::json::value_t::object: return "an object";
    case nlohmann::json::value_t::array: return "an array";
    case nlohmann::json::value_t::string: return "a string";
    case nlohmann::json::value_t::boolean: return "a boolean";
    case nlohmann::json::value_t::binary: return "binary data";
    case nlohmann::json::value_t::discarded: return "nothing";
    default: return "a number";
  }
}

std::string Reader::Join(const std::string& path, std::string_view key) {
  std::string out = path;
  if (!out.empty()) out += '.';
  out += key;
  return out;
}

void Reader::Fail(const std::string& path, const std::string& why, ErrorCode code) {
  if (!ok()) return;
  const std::string where = path.empty() ? "(the document)" : path;
  error_ = Error{code, -1, where, source_ + ": " + where + ": " + why};
}
void Reader::Fail(const Node& at, const std::string& why, ErrorCode code) { Fail(at.path, why, code); }

Node Reader::Member(const Node& object, std::string_view key) {
  if (!ok() || !object.ok()) return {};
  if (!object.json->is_object()) {
    Fail(object, std::string("expected an object, got ") + TypeName(*object.json));
    return {};
  }
  const auto it = object.json->find(key);
  if (it == object.json->end()) {
    Fail(Join(object.path, key), "is missing");
    return {};
  }
  return Node{&*it, Join(object.path, key)};
}

bool Reader::Has(const Node& object, std::string_view key) {
  if (!ok() || !object.ok()) return false;
  if (!object.json->is_object()) {
    Fail(object, std::string("expected an object, got ") + TypeName(*object.json));
    return false;
  }
  const auto it = object.json->find(key);
  return it != object.json->end() && !it->is_null();
}

std::size_t Reader::ArraySize(const Node& array, std::size_t min_size) {
  if (!ok() || !array.ok()) return 0;
  if (!array.json->is_array()) {
    Fail(array, std::string("expected an array, got ") + TypeName(*array.json));
    return 0;
  }
  if (array.json->size() < min_size) {
    Fail(array, "has " + std::to_string(array.json->size()) + " elements; " + std::to_string(min_size) +
                    (min_size == 1 ? " is" : " are") + " needed");
    return 0;
  }
  return array.json->size();
}

Node Reader::Element(const Node& array, std::size_t i) {
  const std::size_t size = ArraySize(array);
  if (!ok()) return {};
  const std::string path = array.path + "[" + std::to_string(i) + "]";
  if (i >= size) {
    Fail(path, "is missing (the array has " + std::to_string(size) + " elements)");
    return {};
  }
  return Node{&(*array.json)[i], path};
}

double Reader::Number(const Node& v) {
  if (!ok() || !v.ok()) return 0;
  if (!v.json->is_number()) {
    Fail(v, std::string("expected a number, got ") + TypeName(*v.json));
    return 0;
  }
  return v.json->get<double>();
}

float Reader::Float(const Node& v) {
  const double d = Number(v);
  if (!ok()) return 0;
  if (!(std::fabs(d) <= static_cast<double>(std::numeric_limits<float>::max()))) {
    Fail(v, "is " + v.json->dump() + ", beyond the range of a float");
    return 0;
  }
  return static_cast<float>(d);
}

float Reader::OptionalFloat(const Node& object, std::string_view key, float fallback) {
  if (!Has(object, key)) return fallback;
  return Float(Member(object, key));
}

int32_t Reader::Int(const Node& v, int32_t lo, int32_t hi) {
  const double d = Number(v);
  if (!ok()) return lo;
  if (!(d >= lo && d < hi) || d != std::floor(d)) {
    Fail(v, "is " + v.json->dump() + "; expected an integer within [" + std::to_string(lo) + ", " + std::to_string(hi) + ")");
    return lo;
  }
  return static_cast<int32_t>(d);
}

std::string Reader::String(const Node& v) {
  if (!ok() || !v.ok()) return {};
  if (!v.json->is_string()) {
    Fail(v, std::string("expected a string, got ") + TypeName(*v.json));
    return {};
  }
  return v.json->get<std::string>();
}

bool Reader::Bool(const Node& v) {
  if (!ok() || !v.ok()) return false;
  if (!v.json->is_boolean()) {
    Fail(v, std::string("expected true or false, got ") + TypeName(*v.json));
    return false;
  }
  return v.json->get<bool>();
}

}  // namespace tendon::json
