// ports/json/json.cpp: parsing through nlohmann-json (see json.h).
#include "ports/json/json.h"

#include <algorithm>
#include <fstream>
#include <iterator>

namespace tendon::json {

ParseResult Parse(std::string_view text) {
  ParseResult r;
  try {
    auto document = std::make_shared<nlohmann::json>(nlohmann::json::parse(text));
    r.document = document;
    r.value = Value(*document);
    r.ok = true;
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann counts the bytes read, the bad one included (1-based); ours is its index,
    // clamped to the text (empty input: 0).
    r.error_offset = std::min(e.byte > 0 ? e.byte - 1 : 0, text.size());
    r.error = e.what();
  } catch (const nlohmann::json::exception& e) {  // e.g. a number past double (1e999)
    r.error = e.what();
  }
  return r;
}

ParseResult ParseFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ParseResult r;
    r.error = path + ": cannot be read";
    return r;
  }
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ParseResult r = Parse(text);
  if (!r.ok) r.error = path + ": " + r.error;
  return r;
}

}  // namespace tendon::json
