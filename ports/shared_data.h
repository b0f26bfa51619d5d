// ports/shared_data.h: where the project's assets are (see docs/installing.md, "Assets").
//
// The directory is $TENDON_SHARED_DATA when set (CMake sets it for ctest), else
// ../shared/data relative to the working directory (the repository root for the demo and
// benchmarks). Tests, benchmarks and the demo resolve asset paths through this one place.
#pragma once

#include <cstdlib>
#include <string>

namespace tendon::ports {

inline std::string SharedDataPath(const std::string& relative) {
  const char* env = std::getenv("TENDON_SHARED_DATA");
  return std::string(env != nullptr ? env : "../shared/data") + "/" + relative;
}

}  // namespace tendon::ports
