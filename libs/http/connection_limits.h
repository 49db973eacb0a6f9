// The limits on each client's connections to an HttpTransport.
#pragma once

#include <cstdint>

#include "absl/time/time.h"

namespace gpuaas::http {

// What keeps slow or greedy clients from starving the others (gpuaas-storage's --s3-* flags, the
// gateway's).
struct ConnectionLimits {
  // Open connections from one client address (the AWS CLI opens 10, rclone 4 per transfer).
  int max_connections_per_client = 128;
  // From accept to a whole request head (TLS handshake included), and from a later head's
  // first byte to its last.
  absl::Duration header_timeout = absl::Seconds(15);
  // The longest a request body may pause.
  absl::Duration body_idle_timeout = absl::Seconds(30);
  // After body_rate_grace of waiting, a body must keep arriving at body_min_rate bytes per
  // second on average (body_pace.h), or it is cut (408) and its worker freed: a pause only
  // bounded by body_idle_timeout would let a trickle hold a worker for hours. 0: no rate.
  // Apache's mod_reqtimeout default; a client slower than this per connection (8 MiB parts in
  // 4.5 hours) is not uploading.
  absl::Duration body_rate_grace = absl::Seconds(30);
  int64_t body_min_rate = 500;
};

}  // namespace gpuaas::http
