#include "tools/gpuaasctl/price.h"

#include <limits>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace gpuaas::ctl {
namespace {

constexpr int kMicroDigits = 6;
constexpr int64_t kMicrosPerUnit = 1'000'000;

absl::Status BadPrice(std::string_view flag, std::string_view text, std::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat(std::string(flag), ": ", std::string(why), ", got \"", std::string(text), "\""));
}

// `value` as a decimal with `places` digits after the point, trailing zeros beyond
// `min_places` dropped.
std::string FormatFixed(int64_t value, int64_t unit, int places, int min_places) {
  std::string sign = value < 0 ? "-" : "";
  // Negate as unsigned: the most negative int64 has no positive counterpart.
  const uint64_t magnitude =
      value < 0 ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  const uint64_t u = static_cast<uint64_t>(unit);
  std::string fraction = absl::StrCat(magnitude % u);
  fraction.insert(0, static_cast<size_t>(places) - fraction.size(), '0');
  while (fraction.size() > static_cast<size_t>(min_places) && fraction.back() == '0') {
    fraction.pop_back();
  }
  std::string out = absl::StrCat(sign, magnitude / u);
  if (!fraction.empty()) {
    absl::StrAppend(&out, ".", fraction);
  }
  return out;
}

}  // namespace

absl::StatusOr<int64_t> ParsePriceMicros(std::string_view flag, std::string_view text) {
  constexpr std::string_view kWant = "want a decimal amount like 1.20 (at most 6 decimal places)";
  const size_t point = text.find('.');
  const std::string_view whole = text.substr(0, point);
  const std::string_view fraction =
      point == std::string_view::npos ? std::string_view() : text.substr(point + 1);
  auto all_digits = [](std::string_view s) {
    for (char c : s) {
      if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) {
        return false;
      }
    }
    return true;
  };
  if (!text.empty() && text.front() == '-') {
    return BadPrice(flag, text, "must not be negative");
  }
  if (whole.empty() || !all_digits(whole) || !all_digits(fraction) ||
      (point != std::string_view::npos && fraction.empty())) {
    return BadPrice(flag, text, kWant);
  }
  if (fraction.size() > kMicroDigits) {
    return BadPrice(flag, text, "at most 6 decimal places (prices are kept in millionths)");
  }
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t units = 0;
  for (char c : whole) {
    const int digit = c - '0';
    if (units > (kMax - digit) / 10) {
      return BadPrice(flag, text, "too large");
    }
    units = units * 10 + digit;
  }
  int64_t micros_part = 0;
  for (int i = 0; i < kMicroDigits; ++i) {
    micros_part =
        micros_part * 10 + (i < static_cast<int>(fraction.size()) ? fraction[i] - '0' : 0);
  }
  if (units > (kMax - micros_part) / kMicrosPerUnit) {
    return BadPrice(flag, text, "too large");
  }
  return units * kMicrosPerUnit + micros_part;
}

std::string FormatPriceMicros(int64_t micros) {
  return FormatFixed(micros, kMicrosPerUnit, kMicroDigits, 2);
}

std::string FormatMilli(int64_t milli) { return FormatFixed(milli, 1000, 3, 0); }

}  // namespace gpuaas::ctl
