// Row <-> message conversions shared by the repository's files.
#pragma once

#include <optional>
#include <string>

#include <google/protobuf/timestamp.pb.h>
#include <pqxx/pqxx>

#include "absl/time/time.h"

namespace gpuaas::auth::internal {

// Timestamps travel as microseconds since the epoch: `(extract(epoch from t) * 1e6)::int8`.
#define GPUAAS_MICROS(col) "(extract(epoch from " col ") * 1000000)::int8"

inline void SetMicros(google::protobuf::Timestamp& ts, int64_t micros) {
  ts.set_seconds(micros / 1'000'000);
  ts.set_nanos(static_cast<int32_t>((micros % 1'000'000) * 1000));
}

inline absl::Time TimeFromMicros(const pqxx::field& f) {
  return absl::FromUnixMicros(f.as<int64_t>());
}

inline std::optional<absl::Time> OptionalTime(const pqxx::field& f) {
  if (f.is_null()) return std::nullopt;
  return absl::FromUnixMicros(f.as<int64_t>());
}

inline int64_t Micros(absl::Time t) { return absl::ToUnixMicros(t); }

inline std::optional<std::string> NullIfEmpty(const std::string& s) {
  if (s.empty()) return std::nullopt;
  return s;
}

}  // namespace gpuaas::auth::internal
