// The gateway's route table over the public services, as the tests of what a REST request
// becomes (request_transcoder_test, seed_compat_test) start from.
#pragma once

#include <gtest/gtest.h>

#include "services/gateway/public_services.h"
#include "services/gateway/route_table.h"

namespace gpuaas::gateway {

class PublicRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto services = PublicServiceDescriptors();
    ASSERT_TRUE(services.ok());
    auto t = RouteTable::FromServices(*services);
    ASSERT_TRUE(t.ok()) << t.status();
    table_ = *std::move(t);
  }

  RouteTable table_;
};

}  // namespace gpuaas::gateway
