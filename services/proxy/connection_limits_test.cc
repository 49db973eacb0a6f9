#include "services/proxy/connection_limits.h"

#include <gtest/gtest.h>

#include <list>

namespace gpuaas::proxy {
namespace {

TEST(ConnectionLimits, CapsEachClientAndTheTotal) {
  ConnectionLimits limits({.max_connections = 3, .max_connections_per_client = 2});
  std::list<ConnectionLimits::Slot> held;
  held.push_back(limits.TryAcquire("10.0.0.1"));
  held.push_back(limits.TryAcquire("10.0.0.1"));
  EXPECT_FALSE(limits.TryAcquire("10.0.0.1").held());  // per client
  held.push_back(limits.TryAcquire("10.0.0.2"));
  EXPECT_TRUE(held.back().held());
  EXPECT_FALSE(limits.TryAcquire("10.0.0.3").held());  // in total
  held.pop_front();
  EXPECT_TRUE(limits.TryAcquire("10.0.0.3").held());  // released on destruction
  EXPECT_TRUE(limits.TryAcquire("10.0.0.1").held());
}

}  // namespace
}  // namespace gpuaas::proxy
