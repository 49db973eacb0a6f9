// Kubernetes resource quantities ("8", "500m", "32Gi", "1.5Ti") for the cpu, memory and disk
// fields of every API, parsed into exact integers and formatted back.
//
// Grammar, a subset of apimachinery's pkg/api/resource/quantity.go:
//
//   <quantity>     ::= <sign>? <number> <suffix>
//   <sign>         ::= "+" | "-"
//   <number>       ::= <digits> | <digits> "." <digits> | <digits> "." | "." <digits>
//   <suffix>       ::= <binarySI> | <decimalSI> | <exponent>
//   <binarySI>     ::= Ki | Mi | Gi | Ti | Pi | Ei                  (powers of 1024)
//   <decimalSI>    ::= n | u | m | "" | k | M | G | T | P | E       (powers of 1000)
//   <exponent>     ::= ("e" | "E") <sign>? <digits>                 (a power of ten)
//
// Suffixes are case-sensitive ("1gi" and "1K" are not quantities), "1E" is one exa and "1E3" is
// one thousand, and nothing else may appear: no whitespace, no second suffix, no exponent after a
// suffix. Where we differ from Kubernetes: it rounds values finer than 1n up and silently caps
// binary values at 2^63-1; we never round or cap. A value that is not exact in the unit asked for,
// or that does not fit, is an error, and so is a number of more than 38 significant digits (no
// int64 needs them). Arithmetic is exact integer arithmetic, never floating point.
//
// Errors are INVALID_ARGUMENT with a message "<field>: <why>" so that callers can pass them on to
// clients unchanged. Nothing here blocks; all functions are pure and thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace gpuaas {

// The most CPU a single quantity may ask for, in cores. No node comes near it; the bound keeps
// sums of many quantities far from overflow.
inline constexpr int64_t kMaxCpuCores = 1'000'000;

// Parses a CPU quantity into millicores ("500m" -> 500, "2" -> 2000, "0.5" -> 500).
// Binary suffixes are refused (a "Ki" of CPU means nothing). The value must be positive, a whole
// number of millicores (1m is the finest CPU unit, as in Kubernetes) and at most kMaxCpuCores.
// Errors: INVALID_ARGUMENT naming `field` ("<field>: required" when `text` is empty).
absl::StatusOr<int64_t> ParseCpuMillis(std::string_view field, std::string_view text);

// Parses a memory or disk quantity into bytes ("32Gi", "1.5Ti", "100M", "1e9").
// Any suffix is allowed. The value must be positive, a whole number of bytes ("1.5" and "500m" are
// not) and at most INT64_MAX.
// Errors: INVALID_ARGUMENT naming `field` ("<field>: required" when `text` is empty).
absl::StatusOr<int64_t> ParseBytes(std::string_view field, std::string_view text);

// Formats millicores as whole cores when exact ("8"), else as millicores ("500m", "1500m").
// ParseCpuMillis(f, FormatCpuMillis(x)) == x for every x it accepts. Non-positive values format
// too ("0", "-500m") but do not parse back.
std::string FormatCpuMillis(int64_t millis);

// Formats bytes with the exact suffix that leaves the fewest digits, binary winning ties: "32Gi",
// "1536Mi", "1000Ki" (not "1024k"), "500G" (not "488281250Ki"), "2E"; plain bytes ("1000001")
// when no suffix is exact. ParseBytes(f, FormatBytes(x)) == x for every x it accepts.
// Non-positive values format too ("0", "-1Ki") but do not parse back.
std::string FormatBytes(int64_t bytes);

}  // namespace gpuaas
