// What every fuzz target shares: the input as text, cut into fields, and a failed property
// that stops the run the way a sanitizer does (libFuzzer saves the input as crash-<sha1>).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/string_view.h"

namespace gpuaas::fuzz {

inline std::string_view AsText(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Debian's abseil has a string_view of its own, not std's.
inline absl::string_view Av(std::string_view s) { return {s.data(), s.size()}; }
inline std::string_view Sv(absl::string_view s) { return {s.data(), s.size()}; }

// `text` cut at each `separator` into at most `count` fields, the last holding the rest (and
// any further separators); fewer when the text has fewer.
inline std::vector<std::string_view> Fields(std::string_view text, char separator, size_t count) {
  std::vector<std::string_view> fields;
  while (fields.size() + 1 < count) {
    size_t at = text.find(separator);
    if (at == std::string_view::npos) {
      break;
    }
    fields.push_back(text.substr(0, at));
    text.remove_prefix(at + 1);
  }
  fields.push_back(text);
  return fields;
}

// The field at `index`, or "" when the input had fewer.
inline std::string_view FieldOr(const std::vector<std::string_view>& fields, size_t index) {
  return index < fields.size() ? fields[index] : std::string_view();
}

// A property of the parser did not hold: the input is a bug as much as a crash is.
[[noreturn]] inline void Fail(std::string_view what, std::string_view detail = {}) {
  std::fprintf(stderr, "fuzz property failed: %.*s %.*s\n", static_cast<int>(what.size()),
               what.data(), static_cast<int>(detail.size()), detail.data());
  std::abort();
}

}  // namespace gpuaas::fuzz
