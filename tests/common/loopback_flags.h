// The service kit's flags for a service a test runs in process: on a free loopback port, no
// metrics endpoint, on the test's database.
#pragma once

#include <string>

#include "libs/service/service_flags.h"

namespace gpuaas::testing {

inline service::ServiceFlags LoopbackServiceFlags(const std::string& dsn, int pool_size = 8,
                                                  int workers = 8) {
  service::ServiceFlags f;
  f.listen = "127.0.0.1:0";
  f.metrics_listen = "";
  f.db_dsn = dsn;
  f.db_pool_size = pool_size;
  f.workers = workers;
  return f;
}

}  // namespace gpuaas::testing
