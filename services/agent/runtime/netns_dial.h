// A TCP connection to a port on a workload's own loopback, made from the agent: what a tenant's
// port-forward reaches (any port the workload listens on, declared in its template or not,
// bound to 127.0.0.1 or to all addresses). The socket is made inside the workload's network
// namespace, on a thread of its own that joins it and then ends, so no other agent thread ever
// runs in a workload's namespace; the socket keeps the namespace it was made in.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace gpuaas::agent {

// Connects to 127.0.0.1:`port` in the namespace bound at `netns_path` (NetnsPath(dir)) and
// returns the connected socket (blocking, close-on-exec; the caller owns it). Errors:
// INVALID_ARGUMENT for a port outside 1-65535; NOT_FOUND when the namespace is gone;
// UNAVAILABLE "connection refused" when nothing listens there, DEADLINE_EXCEEDED after
// `timeout`; INTERNAL otherwise. Blocks up to `timeout`.
absl::StatusOr<int> DialInNamespace(const std::string& netns_path, int port,
                                    absl::Duration timeout = absl::Seconds(10));

}  // namespace gpuaas::agent
