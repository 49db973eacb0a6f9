// Readiness probes of a workload's probe port on this host, at one of the node's IPv4 addresses
// (a container's host ports answer at the node's advertised address only).
#pragma once

#include <string>

#include "absl/time/time.h"

namespace gpuaas::agent {

// A TCP connection to address:port is accepted within `timeout`.
bool ProbeTcp(const std::string& address, int port, absl::Duration timeout);

// An HTTP/1.1 GET of `path` on address:port is answered 200-399 within `timeout`.
bool ProbeHttp(const std::string& address, int port, const std::string& path,
               absl::Duration timeout);

}  // namespace gpuaas::agent
