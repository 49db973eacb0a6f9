// Readiness probes of a workload's probe port on this host.
#pragma once

#include <string>

#include "absl/time/time.h"

namespace gpuaas::agent {

// A TCP connection to 127.0.0.1:port is accepted within `timeout`.
bool ProbeTcp(int port, absl::Duration timeout);

// An HTTP/1.1 GET of `path` on 127.0.0.1:port is answered 200-399 within `timeout`.
bool ProbeHttp(int port, const std::string& path, absl::Duration timeout);

}  // namespace gpuaas::agent
