// absl::Time and absl::Duration to and from google.protobuf.Timestamp and Duration (the API's
// time types), at microsecond precision like PostgreSQL's timestamptz.
#pragma once

#include <google/protobuf/duration.pb.h>
#include <google/protobuf/timestamp.pb.h>

#include "absl/time/time.h"

namespace gpuaas {

inline google::protobuf::Timestamp ToProtoTime(absl::Time t) {
  const int64_t micros = absl::ToUnixMicros(t);
  google::protobuf::Timestamp ts;
  ts.set_seconds(micros / 1'000'000);
  ts.set_nanos(static_cast<int32_t>((micros % 1'000'000) * 1000));
  if (ts.nanos() < 0) {  // before 1970: nanos must stay in [0, 1e9)
    ts.set_seconds(ts.seconds() - 1);
    ts.set_nanos(ts.nanos() + 1'000'000'000);
  }
  return ts;
}

inline absl::Time FromProtoTime(const google::protobuf::Timestamp& ts) {
  return absl::FromUnixSeconds(ts.seconds()) + absl::Nanoseconds(ts.nanos());
}

inline absl::Duration FromProtoDuration(const google::protobuf::Duration& d) {
  return absl::Seconds(d.seconds()) + absl::Nanoseconds(d.nanos());
}

inline google::protobuf::Duration ToProtoDuration(absl::Duration d) {
  google::protobuf::Duration out;
  const int64_t nanos = absl::ToInt64Nanoseconds(d);
  out.set_seconds(nanos / 1'000'000'000);
  out.set_nanos(static_cast<int32_t>(nanos % 1'000'000'000));
  return out;
}

}  // namespace gpuaas
