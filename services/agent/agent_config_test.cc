#include "services/agent/agent_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "libs/testing/status_matchers.h"

namespace gpuaas::agent {
namespace {

using ::gpuaas::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

TEST(AgentConfigTest, ParsesLabels) {
  ASSERT_OK_AND_ASSIGN(auto labels, ParseLabels("zone=eu-1,rack=r7,gpuaas.io/pool="));
  EXPECT_THAT(labels,
              ElementsAre(Pair("gpuaas.io/pool", ""), Pair("rack", "r7"), Pair("zone", "eu-1")));
  ASSERT_OK_AND_ASSIGN(auto none, ParseLabels(""));
  EXPECT_TRUE(none.empty());
  ASSERT_OK_AND_ASSIGN(auto eq, ParseLabels("k=a=b"));
  EXPECT_EQ(eq["k"], "a=b");
}

TEST(AgentConfigTest, RefusesBadLabels) {
  for (const char* bad : {"zone", "=x", "a=1,,b=2", "a b=1", "a=1,a=2", "a=1,"}) {
    EXPECT_THAT(ParseLabels(bad),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--labels")))
        << bad;
  }
  EXPECT_THAT(ParseLabels("k=" + std::string(300, 'v')),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("256")));
}

TEST(AgentConfigTest, JoinHostPortBracketsIpv6) {
  EXPECT_EQ(JoinHostPort("10.0.0.7", 17061), "10.0.0.7:17061");
  EXPECT_EQ(JoinHostPort("agent", 17061), "agent:17061");
  EXPECT_EQ(JoinHostPort("::1", 17061), "[::1]:17061");
}

}  // namespace
}  // namespace gpuaas::agent
