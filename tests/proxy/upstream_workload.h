// tests/proxy/upstream.py as the proxy tests' workload: a local process behind static routes, or
// the command of a platform instance (real sandbox, real agent).
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "gpuaas/instance/v1/instance.pb.h"
#include "tests/common/child_process.h"

namespace gpuaas::proxy_testing {

// upstream.py's source.
std::string UpstreamScript();

// upstream.py serving on `port` (logging to `log`), once it answers; fails the test otherwise.
std::unique_ptr<testing::ChildProcess> StartUpstream(int port, const std::filesystem::path& log);

// An instance `id` of `spec` running upstream.py: 8080 the private probe port, 9090 public.
::gpuaas::instance::v1::CreateInstanceRequest UpstreamInstance(const std::string& id,
                                                               const std::string& spec);

}  // namespace gpuaas::proxy_testing
