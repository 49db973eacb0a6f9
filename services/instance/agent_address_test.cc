#include "services/instance/agent_address.h"

#include <gtest/gtest.h>

namespace gpuaas::instance {
namespace {

TEST(AgentAddressAt, TheHostIsThePeersWhateverTheReportSays) {
  EXPECT_EQ(AgentAddressAt("10.0.0.7", "10.0.0.7:17061"), "10.0.0.7:17061");
  EXPECT_EQ(AgentAddressAt("10.0.0.7", "10.0.0.1:17061"), "10.0.0.7:17061");  // another machine
  EXPECT_EQ(AgentAddressAt("10.0.0.7", "auth.internal:17051"), "10.0.0.7:17051");
  EXPECT_EQ(AgentAddressAt("fd00::7", "[fd00::1]:17061"), "[fd00::7]:17061");
}

TEST(AgentAddressAt, NoPortNoAddress) {
  EXPECT_EQ(AgentAddressAt("10.0.0.7", ""), "");
  EXPECT_EQ(AgentAddressAt("10.0.0.7", "10.0.0.7"), "");
  EXPECT_EQ(AgentAddressAt("10.0.0.7", "10.0.0.7:"), "");
  EXPECT_EQ(AgentAddressAt("10.0.0.7", "10.0.0.7:80/x"), "");
}

TEST(AgentAddressAt, AUnixPeerKeepsTheReport) {
  EXPECT_EQ(AgentAddressAt("/run/gpuaas/instance.sock", "127.0.0.1:17061"), "127.0.0.1:17061");
}

}  // namespace
}  // namespace gpuaas::instance
