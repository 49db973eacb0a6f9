// Prices as people type and read them ("1.20") and as stock.proto keeps them (micros per hour,
// 1.20 → 1200000): exact decimal conversion, never through floating point.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace gpuaas::ctl {

// "1.20" → 1200000, "0.000001" → 1, "3" → 3000000: digits, optionally a point and 1 to 6
// more digits. Error: INVALID_ARGUMENT naming `flag` for anything else (a sign, an exponent,
// a seventh decimal place, a value past int64 micros).
absl::StatusOr<int64_t> ParsePriceMicros(std::string_view flag, std::string_view text);

// 1200000 → "1.20", 1 → "0.000001", 1234500 → "1.2345": at least two decimal places, at most
// six, without trailing zeros beyond the second.
std::string FormatPriceMicros(int64_t micros);

// A thousandths count as a decimal fraction: 250 → "0.25", 5 → "0.005", 1000 → "1".
std::string FormatMilli(int64_t milli);

}  // namespace gpuaas::ctl
