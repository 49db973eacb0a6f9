#include "services/gateway/route_table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "services/gateway/public_services.h"

namespace gpuaas::gateway {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

RouteTable Routes() {
  auto services = PublicServiceDescriptors();
  EXPECT_TRUE(services.ok()) << services.status();
  auto table = RouteTable::FromServices(*services);
  EXPECT_TRUE(table.ok()) << table.status();
  return *std::move(table);
}

std::string MethodAt(const RouteTable& t, absl::string_view verb, absl::string_view path) {
  auto m = t.Find(verb, path);
  return m ? std::string(m->route->method->name()) : "";
}

TEST(RouteTableTest, EveryPublicRuleLoadsAndFindsItsMethod) {
  RouteTable t = Routes();
  EXPECT_GT(t.routes().size(), 60u);
  EXPECT_EQ(MethodAt(t, "POST", "/v1/instances"), "CreateInstance");
  EXPECT_EQ(MethodAt(t, "GET", "/v1/instances"), "ListInstances");
  EXPECT_EQ(MethodAt(t, "GET", "/v1/instances:watch"), "WatchInstances");
  EXPECT_EQ(MethodAt(t, "POST", "/v1/instances/ins-1:start"), "StartInstance");
  EXPECT_EQ(MethodAt(t, "GET", "/v1/instances/ins-1/logs"), "GetInstanceLogs");
  // No GET has the verb: an id with a colon, which the service then finds or refuses.
  EXPECT_EQ(MethodAt(t, "GET", "/v1/instances/ins-1:start"), "GetInstance");
  EXPECT_EQ(MethodAt(t, "PUT", "/v1/instances"), "");
  EXPECT_TRUE(t.HasPath("/v1/instances"));
  EXPECT_FALSE(t.HasPath("/v1/nothing"));
}

TEST(RouteTableTest, TheSeedsPathsGoToTheSameMethods) {
  RouteTable t = Routes();
  EXPECT_EQ(MethodAt(t, "POST", "/stocks"), "CreateStocks");
  EXPECT_EQ(MethodAt(t, "DELETE", "/stocks"), "DeleteStocks");
  EXPECT_EQ(MethodAt(t, "POST", "/gpu-instances"), "CreateInstance");
  auto get = t.Find("GET", "/gpu-instances/ins-9");
  ASSERT_TRUE(get);
  EXPECT_EQ(get->route->method->name(), "GetInstance");
  EXPECT_THAT(get->bindings, ElementsAre(Pair("instance_id", "ins-9")));
  EXPECT_EQ(MethodAt(t, "DELETE", "/gpu-instances/ins-9"), "DeleteInstance");
  EXPECT_EQ(MethodAt(t, "POST", "/storages"), "CreateStorage");
}

// An image version's id is "name:version" (GetImage, DeleteImage): a colon in a variable's
// last segment is the id's own when no route has that verb.
TEST(RouteTableTest, AnIdMayHoldAColon) {
  RouteTable t = Routes();
  auto get = t.Find("GET", "/v1/images/jupyter:1.0");
  ASSERT_TRUE(get);
  EXPECT_EQ(get->route->method->name(), "GetImage");
  EXPECT_THAT(get->bindings, ElementsAre(Pair("image", "jupyter:1.0")));
  EXPECT_EQ(MethodAt(t, "DELETE", "/v1/images/jupyter:1.0"), "DeleteImage");
  // A verb route still wins where its verb is said.
  auto start = t.Find("POST", "/v1/instances/ins-1:start");
  ASSERT_TRUE(start);
  EXPECT_EQ(start->route->method->name(), "StartInstance");
  EXPECT_THAT(start->bindings, ElementsAre(Pair("instance_id", "ins-1")));
}

TEST(RouteTableTest, MachineServicesHaveNoRoute) {
  RouteTable t = Routes();
  for (const Route& r : t.routes()) {
    const std::string& service = r.method->service()->full_name();
    EXPECT_NE(service, "gpuaas.stock.v1.NodeAgentService");
    EXPECT_NE(service, "gpuaas.instance.v1.AccessService");
    EXPECT_NE(service, "gpuaas.instance.v1.NodeWorkloadService");
  }
}

}  // namespace
}  // namespace gpuaas::gateway
