#include "libs/common/quantity.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"

namespace gpuaas {
namespace {

// Wide enough for 38 decimal digits, and for any value up to INT64_MAX times 5 while it is scaled.
using Int128 = __int128;

// A significand of more digits than this does not fit Int128. No whole int64 needs so many.
constexpr size_t kMaxSignificantDigits = 38;

// Exponents are saturated here while they are read: 10^±1000000 is as unrepresentable as
// 10^±(2^63), and a saturated value cannot overflow the int64 arithmetic below.
constexpr int64_t kExponentCap = 1'000'000;

struct Suffix {
  std::string_view text;
  int exp10;  // the power of ten it multiplies by
  int exp2;   // the power of two it multiplies by
};

constexpr Suffix kSuffixes[] = {
    {"", 0, 0},    {"n", -9, 0},  {"u", -6, 0},  {"m", -3, 0},  {"k", 3, 0},   {"M", 6, 0},
    {"G", 9, 0},   {"T", 12, 0},  {"P", 15, 0},  {"E", 18, 0},  {"Ki", 0, 10}, {"Mi", 0, 20},
    {"Gi", 0, 30}, {"Ti", 0, 40}, {"Pi", 0, 50}, {"Ei", 0, 60},
};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// A quantity that matches the grammar: (negative ? -1 : 1) * <int>.<frac> * 10^exp10 * 2^exp2.
struct Scanned {
  bool negative = false;
  std::string_view int_digits;
  std::string_view frac_digits;
  int64_t exp10 = 0;
  int exp2 = 0;
};

std::string_view TakeDigits(std::string_view text, size_t& pos) {
  const size_t start = pos;
  while (pos < text.size() && IsDigit(text[pos])) {
    ++pos;
  }
  return text.substr(start, pos - start);
}

// Reads ("e" | "E") <sign>? <digits>, as Kubernetes does with strconv.ParseInt after the 'e'.
std::optional<int64_t> ParseExponent(std::string_view suffix) {
  if (suffix.size() < 2 || (suffix[0] != 'e' && suffix[0] != 'E')) {
    return std::nullopt;
  }
  size_t pos = 1;
  const bool negative = suffix[pos] == '-';
  if (suffix[pos] == '-' || suffix[pos] == '+') {
    ++pos;
  }
  std::string_view digits = TakeDigits(suffix, pos);
  if (digits.empty() || pos != suffix.size()) {
    return std::nullopt;
  }
  int64_t exponent = 0;
  for (char c : digits) {
    exponent = std::min(exponent * 10 + (c - '0'), kExponentCap);
  }
  return negative ? -exponent : exponent;
}

std::optional<Scanned> Scan(std::string_view text) {
  Scanned q;
  size_t pos = 0;
  if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    q.negative = text[pos] == '-';
    ++pos;
  }
  q.int_digits = TakeDigits(text, pos);
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    q.frac_digits = TakeDigits(text, pos);
  }
  // "." and "+" are not numbers: at least one digit on one side of the point.
  if (q.int_digits.empty() && q.frac_digits.empty()) {
    return std::nullopt;
  }
  const std::string_view suffix = text.substr(pos);
  for (const Suffix& s : kSuffixes) {
    if (s.text == suffix) {
      q.exp10 = s.exp10;
      q.exp2 = s.exp2;
      return q;
    }
  }
  // Only after the table, so that "1E" is one exa and "1E3" a thousand.
  std::optional<int64_t> exponent = ParseExponent(suffix);
  if (!exponent.has_value()) {
    return std::nullopt;
  }
  q.exp10 = *exponent;
  return q;
}

enum class Outcome { kOk, kZero, kFraction, kTooLarge, kTooManyDigits };

struct Evaluated {
  Outcome outcome;
  int64_t value = 0;
};

// The magnitude of `q` in units of 10^unit_exp10, if it is a whole number no larger than `max`.
// Writing the value as significand * 2^p2 * 5^p5 makes both checks exact: divide out the negative
// powers (each must divide the significand), then multiply in the positive ones against `max`.
Evaluated Evaluate(const Scanned& q, int unit_exp10, int64_t max) {
  std::string digits;
  digits.reserve(q.int_digits.size() + q.frac_digits.size());
  digits.append(q.int_digits).append(q.frac_digits);
  int64_t scale = q.exp10 - unit_exp10 - static_cast<int64_t>(q.frac_digits.size());

  const size_t first = digits.find_first_not_of('0');
  if (first == std::string::npos) {
    return {Outcome::kZero};
  }
  digits.erase(0, first);
  // Trailing zeros move into the exponent, so "1.50000000000000000000000000000000000000" is fine.
  while (digits.back() == '0') {
    digits.pop_back();
    ++scale;
  }
  if (digits.size() > kMaxSignificantDigits) {
    return {Outcome::kTooManyDigits};
  }
  Int128 m = 0;
  for (char c : digits) {
    m = m * 10 + (c - '0');
  }

  int64_t p5 = scale;
  int64_t p2 = scale + q.exp2;
  // Each loop ends within ~128 steps whatever the exponent: a non-zero Int128 has few factors of
  // 5 or 2, and exceeds `max` after a few multiplications.
  for (; p5 < 0; ++p5) {
    if (m % 5 != 0) {
      return {Outcome::kFraction};
    }
    m /= 5;
  }
  for (; p2 < 0; ++p2) {
    if (m % 2 != 0) {
      return {Outcome::kFraction};
    }
    m /= 2;
  }
  if (m > max) {
    return {Outcome::kTooLarge};
  }
  for (; p5 > 0; --p5) {
    m *= 5;
    if (m > max) {
      return {Outcome::kTooLarge};
    }
  }
  for (; p2 > 0; --p2) {
    m *= 2;
    if (m > max) {
      return {Outcome::kTooLarge};
    }
  }
  return {Outcome::kOk, static_cast<int64_t>(m)};
}

absl::Status Invalid(std::string_view field, std::string_view why) {
  return absl::InvalidArgumentError(std::string(field) + ": " + std::string(why));
}

// The input, escaped and shortened, so that a hostile string cannot bloat or garble the message.
std::string Quoted(std::string_view text) {
  constexpr size_t kMaxShown = 64;
  const std::string_view shown = text.substr(0, kMaxShown);
  return "\"" + absl::CHexEscape(absl::string_view(shown.data(), shown.size())) + "\"" +
         (text.size() > kMaxShown ? "..." : "");
}

// The checks both parsers share, in the order a user would want to hear about them.
absl::StatusOr<Scanned> ScanPositive(std::string_view field, std::string_view text) {
  if (text.empty()) {
    return Invalid(field, "required");
  }
  std::optional<Scanned> q = Scan(text);
  if (!q.has_value()) {
    return Invalid(field, "not a Kubernetes quantity: " + Quoted(text));
  }
  if (q->negative) {
    return Invalid(field, "must be positive");
  }
  return *q;
}

absl::StatusOr<int64_t> Result(std::string_view field, const Evaluated& e,
                               std::string_view not_whole, std::string_view too_large) {
  switch (e.outcome) {
    case Outcome::kOk:
      return e.value;
    case Outcome::kZero:
      return Invalid(field, "must be positive");
    case Outcome::kFraction:
      return Invalid(field, not_whole);
    case Outcome::kTooLarge:
      return Invalid(field, too_large);
    case Outcome::kTooManyDigits:
      break;  // below, where GCC sees that every path returns
  }
  return Invalid(field,
                 "has more than " + std::to_string(kMaxSignificantDigits) + " significant digits");
}

// The units FormatBytes chooses from: binary, then decimal, each largest first.
struct ByteUnit {
  uint64_t size;
  std::string_view suffix;
  bool binary;
};

constexpr ByteUnit kByteUnits[] = {
    {uint64_t{1} << 60, "Ei", true},
    {uint64_t{1} << 50, "Pi", true},
    {uint64_t{1} << 40, "Ti", true},
    {uint64_t{1} << 30, "Gi", true},
    {uint64_t{1} << 20, "Mi", true},
    {uint64_t{1} << 10, "Ki", true},
    {1'000'000'000'000'000'000, "E", false},
    {1'000'000'000'000'000, "P", false},
    {1'000'000'000'000, "T", false},
    {1'000'000'000, "G", false},
    {1'000'000, "M", false},
    {1'000, "k", false},
};

// The magnitude of `value` without the overflow of negating INT64_MIN.
uint64_t Magnitude(int64_t value) {
  return value < 0 ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
}

std::string Sign(int64_t value) { return value < 0 ? "-" : ""; }

}  // namespace

absl::StatusOr<int64_t> ParseCpuMillis(std::string_view field, std::string_view text) {
  absl::StatusOr<Scanned> q = ScanPositive(field, text);
  if (!q.ok()) {
    return q.status();
  }
  if (q->exp2 != 0) {
    return Invalid(field,
                   "binary suffixes (Ki, Mi, ...) are not CPU units; use cores (\"2\") "
                   "or millicores (\"500m\")");
  }
  return Result(field, Evaluate(*q, -3, kMaxCpuCores * 1000),
                "must be a whole number of millicores (1m is the finest CPU unit)",
                "must be at most " + std::to_string(kMaxCpuCores) + " cores");
}

absl::StatusOr<int64_t> ParseBytes(std::string_view field, std::string_view text) {
  absl::StatusOr<Scanned> q = ScanPositive(field, text);
  if (!q.ok()) {
    return q.status();
  }
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  return Result(field, Evaluate(*q, 0, kMax), "must be a whole number of bytes",
                "must be at most " + std::to_string(kMax) + " bytes");
}

std::string FormatCpuMillis(int64_t millis) {
  const uint64_t m = Magnitude(millis);
  if (m % 1000 == 0) {
    return Sign(millis) + std::to_string(m / 1000);
  }
  return Sign(millis) + std::to_string(m) + "m";
}

std::string FormatBytes(int64_t bytes) {
  const uint64_t b = Magnitude(bytes);
  if (b == 0) {
    return "0";
  }
  // The first exact unit of each family is its largest, so its number is the family's shortest.
  // Binary goes first and so wins ties, since memory and disks are sized in binary units.
  std::string best = std::to_string(b);
  std::string best_suffix;
  bool found_binary = false;
  bool found_decimal = false;
  for (const ByteUnit& unit : kByteUnits) {
    bool& found = unit.binary ? found_binary : found_decimal;
    if (found || b % unit.size != 0) {
      continue;
    }
    found = true;
    std::string number = std::to_string(b / unit.size);
    if (best_suffix.empty() || number.size() < best.size()) {
      best = std::move(number);
      best_suffix = unit.suffix;
    }
  }
  return Sign(bytes) + best + best_suffix;
}

}  // namespace gpuaas
