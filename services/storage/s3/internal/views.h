// Debian's abseil (20220623) has its own absl::string_view, distinct from std::string_view;
// these convert at the boundary to absl's string functions.
#pragma once

#include <string_view>

#include "absl/strings/string_view.h"

namespace gpuaas::storage::s3 {

inline absl::string_view Av(std::string_view s) { return absl::string_view(s.data(), s.size()); }
inline std::string_view Sv(absl::string_view s) { return std::string_view(s.data(), s.size()); }

}  // namespace gpuaas::storage::s3
