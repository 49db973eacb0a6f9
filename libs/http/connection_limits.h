// The limits on each client's connections to an HttpTransport.
#pragma once

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
};

}  // namespace gpuaas::http
