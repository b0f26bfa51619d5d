// ports/json/json.cpp: a recursive-descent JSON parser (RFC 8259), depth-limited.
#include "ports/json/json.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace tendon::json {

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  ParseResult Run() {
    ParseResult r;
    SkipSpace();
    if (!ParseValue(r.value, 0)) {
      r.error_offset = at_;
      r.error = error_.empty() ? "invalid JSON" : error_;
      return r;
    }
    SkipSpace();
    if (at_ != text_.size()) {
      r.error_offset = at_;
      r.error = "trailing characters after the JSON value";
      return r;
    }
    r.ok = true;
    return r;
  }

 private:
  static constexpr int kMaxDepth = 256;

  bool Fail(const char* why) {
    if (error_.empty()) error_ = why;
    return false;
  }
  void SkipSpace() {
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\t' || text_[at_] == '\n' || text_[at_] == '\r'))
      ++at_;
  }
  bool Literal(std::string_view word) {
    if (text_.substr(at_, word.size()) != word) return Fail("unknown literal");
    at_ += word.size();
    return true;
  }
  bool ParseValue(Value& v, int depth) {
    if (depth > kMaxDepth) return Fail("nesting deeper than 256");
    if (at_ >= text_.size()) return Fail("unexpected end of input");
    switch (text_[at_]) {
      case 'n': v.kind_ = Value::Kind::kNull; return Literal("null");
      case 't': v.kind_ = Value::Kind::kBool; v.boolean_ = true; return Literal("true");
      case 'f': v.kind_ = Value::Kind::kBool; v.boolean_ = false; return Literal("false");
      case '"': v.kind_ = Value::Kind::kString; return ParseString(v.string_);
      case '[': return ParseArray(v, depth);
      case '{': return ParseObject(v, depth);
      default: return ParseNumber(v);
    }
  }
  bool ParseNumber(Value& v) {
    const std::size_t start = at_;
    if (at_ < text_.size() && text_[at_] == '-') ++at_;
    bool digits = false;
    while (at_ < text_.size() && ((text_[at_] >= '0' && text_[at_] <= '9') || text_[at_] == '.' ||
                                  text_[at_] == 'e' || text_[at_] == 'E' || text_[at_] == '+' || text_[at_] == '-')) {
      digits = digits || (text_[at_] >= '0' && text_[at_] <= '9');
      ++at_;
    }
    if (!digits) return Fail("expected a value");
    const std::string number(text_.substr(start, at_ - start));
    char* end = nullptr;
    v.number_ = std::strtod(number.c_str(), &end);
    if (end != number.c_str() + number.size()) {
      at_ = start;
      return Fail("malformed number");
    }
    if (!std::isfinite(v.number_)) {  // 1e999: out of range, not infinity
      at_ = start;
      return Fail("number out of range");
    }
    v.kind_ = Value::Kind::kNumber;
    return true;
  }
  bool ParseString(std::string& out) {
    ++at_;  // opening quote
    while (at_ < text_.size()) {
      const char c = text_[at_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return Fail("control character in a string");
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (at_ >= text_.size()) break;
      const char e = text_[at_++];
      switch (e) {
        case '"': out.push_back('"'); break;
        case '\\': out.push_back('\\'); break;
        case '/': out.push_back('/'); break;
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'n': out.push_back('\n'); break;
        case 'r': out.push_back('\r'); break;
        case 't': out.push_back('\t'); break;
        case 'u': {
          if (at_ + 4 > text_.size()) return Fail("short \\u escape");
          const unsigned code = static_cast<unsigned>(std::strtoul(std::string(text_.substr(at_, 4)).c_str(), nullptr, 16));
          at_ += 4;
          if (code < 0x80) {
            out.push_back(static_cast<char>(code));
          } else if (code < 0x800) {
            out.push_back(static_cast<char>(0xC0 | (code >> 6)));
            out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
          } else {
            out.push_back(static_cast<char>(0xE0 | (code >> 12)));
            out.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
            out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
          }
          break;
        }
        default: return Fail("unknown escape");
      }
    }
    return Fail("unterminated string");
  }
  bool ParseArray(Value& v, int depth) {
    v.kind_ = Value::Kind::kArray;
    ++at_;
    SkipSpace();
    if (at_ < text_.size() && text_[at_] == ']') {
      ++at_;
      return true;
    }
    for (;;) {
      v.array_.emplace_back();
      SkipSpace();
      if (!ParseValue(v.array_.back(), depth + 1)) return false;
      SkipSpace();
      if (at_ >= text_.size()) return Fail("unterminated array");
      if (text_[at_] == ',') {
        ++at_;
        continue;
      }
      if (text_[at_] == ']') {
        ++at_;
        return true;
      }
      return Fail("expected ',' or ']'");
    }
  }
  bool ParseObject(Value& v, int depth) {
    v.kind_ = Value::Kind::kObject;
    ++at_;
    SkipSpace();
    if (at_ < text_.size() && text_[at_] == '}') {
      ++at_;
      return true;
    }
    for (;;) {
      SkipSpace();
      if (at_ >= text_.size() || text_[at_] != '"') return Fail("expected a member name");
      std::string key;
      if (!ParseString(key)) return false;
      SkipSpace();
      if (at_ >= text_.size() || text_[at_] != ':') return Fail("expected ':'");
      ++at_;
      SkipSpace();
      Value member;
      if (!ParseValue(member, depth + 1)) return false;
      v.object_[key] = std::move(member);
      SkipSpace();
      if (at_ >= text_.size()) return Fail("unterminated object");
      if (text_[at_] == ',') {
        ++at_;
        continue;
      }
      if (text_[at_] == '}') {
        ++at_;
        return true;
      }
      return Fail("expected ',' or '}'");
    }
  }

  std::string_view text_;
  std::size_t at_ = 0;
  std::string error_;
};

ParseResult Parse(std::string_view text) { return Parser(text).Run(); }

ParseResult ParseFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ParseResult r;
    r.error = "cannot open " + path;
    return r;
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  return Parse(buffer.str());
}

}  // namespace tendon::json
