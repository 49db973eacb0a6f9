#include "services/gateway/path_template.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpuaas::gateway {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

TEST(PathTemplateTest, MatchesLiteralsVariablesAndAVerb) {
  auto t = PathTemplate::Parse("/v1/instances/{instance_id}:start");
  ASSERT_TRUE(t.ok()) << t.status();
  std::vector<std::pair<std::string, std::string>> b;
  EXPECT_TRUE(t->Match("/v1/instances/ins-1:start", b));
  EXPECT_THAT(b, ElementsAre(Pair("instance_id", "ins-1")));
  EXPECT_FALSE(t->Match("/v1/instances/ins-1", b));
  EXPECT_FALSE(t->Match("/v1/instances/ins-1:stop", b));
  EXPECT_FALSE(t->Match("/v1/instances/:start", b));
  EXPECT_FALSE(t->Match("/v1/instances/a/b:start", b));
  EXPECT_EQ(t->Shape(), "/v1/instances/{}:start");
}

TEST(PathTemplateTest, AVariableDecodesItsSegmentColonsIncluded) {
  auto t = PathTemplate::Parse("/v1/tenants/{tenant.tenant_id}");
  ASSERT_TRUE(t.ok());
  std::vector<std::pair<std::string, std::string>> b;
  EXPECT_TRUE(t->Match("/v1/tenants/a%20b", b));
  EXPECT_THAT(b, ElementsAre(Pair("tenant.tenant_id", "a b")));
  EXPECT_TRUE(t->Match("/v1/tenants/x:1", b));  // RouteTable::Find prefers a route with a verb
  EXPECT_THAT(b, ElementsAre(Pair("tenant.tenant_id", "x:1")));
  EXPECT_FALSE(t->Match("/v1/tenants/%zz", b));
  EXPECT_FALSE(t->Match("/v1/tenants/%2", b));
}

TEST(PathTemplateTest, RefusesWhatOurRulesDoNotUse) {
  for (const char* bad :
       {"v1/x", "/v1/{name=tenants/*}", "/v1/**", "/v1//x", "/v1/{a}b", "/v1/{}", "/v1/x:"}) {
    auto t = PathTemplate::Parse(bad);
    EXPECT_FALSE(t.ok()) << bad;
    if (!t.ok()) {
      EXPECT_THAT(t.status().message(), HasSubstr(bad));
    }
  }
}

TEST(PathTemplateTest, VerbOnACollection) {
  auto t = PathTemplate::Parse("/v1/auth:login");
  ASSERT_TRUE(t.ok());
  std::vector<std::pair<std::string, std::string>> b;
  EXPECT_TRUE(t->Match("/v1/auth:login", b));
  EXPECT_TRUE(b.empty());
  EXPECT_FALSE(t->Match("/v1/auth", b));
  EXPECT_EQ(t->LiteralCount(), 2);
}

}  // namespace
}  // namespace gpuaas::gateway
