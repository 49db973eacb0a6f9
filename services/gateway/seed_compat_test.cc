#include "services/gateway/seed_compat.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gpuaas/instance/v1/instance.pb.h"
#include "gpuaas/stock/v1/stock.pb.h"
#include "services/gateway/public_routes_test_base.h"
#include "services/gateway/request_transcoder.h"

namespace gpuaas::gateway {
namespace {

using ::testing::HasSubstr;
namespace instancepb = ::gpuaas::instance::v1;
namespace stockpb = ::gpuaas::stock::v1;

class SeedCompatTest : public PublicRoutesTest {
 protected:
  // The request a seed client's call becomes, as the gateway serves it.
  template <class T>
  absl::StatusOr<T> Seed(absl::string_view verb, absl::string_view path, absl::string_view body) {
    auto match = table_.Find(verb, path);
    if (!match) return absl::NotFoundError("no route");
    if (!IsSeedRoute(*match->route)) return absl::InternalError("not a seed route");
    absl::StatusOr<std::string> translated = SeedRequestBody(body);
    if (!translated.ok()) return translated.status();
    auto msg = TranscodeRequest(*match, "", *translated);
    if (!msg.ok()) return msg.status();
    T out;
    out.CopyFrom(**msg);
    return out;
  }
};

// The seed document's Create Stocks, its types filled in as a Go client marshals them.
TEST_F(SeedCompatTest, CreateStocksAsTheSeedWritesIt) {
  auto req = Seed<stockpb::CreateStocksRequest>("POST", "/stocks", R"({
    "number": 2,
    "operationID": "op-1",
    "specName": "a100.1x",
    "cpu": "8",
    "memory": "32Gi",
    "gpuType": "A100-80GB",
    "gpuNum": 1
  })");
  ASSERT_TRUE(req.ok()) << req.status();
  EXPECT_EQ(req->number(), 2);
  EXPECT_EQ(req->operation_id(), "op-1");
  EXPECT_EQ(req->spec_name(), "a100.1x");
  EXPECT_EQ(req->cpu(), "8");
  EXPECT_EQ(req->memory(), "32Gi");
  EXPECT_EQ(req->gpu_type(), "A100-80GB");
  EXPECT_EQ(req->gpu_num(), 1);
}

TEST_F(SeedCompatTest, AQuantityMayComeAsANumber) {
  auto req = Seed<stockpb::CreateStocksRequest>(
      "POST", "/stocks", R"({"number": 1, "specName": "a100.1x", "cpu": 8, "memory": 0.5})");
  ASSERT_TRUE(req.ok()) << req.status();
  EXPECT_EQ(req->cpu(), "8");
  EXPECT_EQ(req->memory(), "0.5");
}

TEST_F(SeedCompatTest, DeleteStocksAsTheSeedWritesIt) {
  auto req = Seed<stockpb::DeleteStocksRequest>(
      "DELETE", "/stocks", R"({"number": 1, "operationID": "op-2", "specName": "a100.1x"})");
  ASSERT_TRUE(req.ok()) << req.status();
  EXPECT_EQ(req->operation_id(), "op-2");
  EXPECT_EQ(req->spec_name(), "a100.1x");
}

TEST_F(SeedCompatTest, StartGpuInstanceAsTheSeedWritesIt) {
  auto req = Seed<instancepb::CreateInstanceRequest>("POST", "/gpu-instances", R"({
    "instanceID": "sd-1",
    "tenantID": "studio-a",
    "tenantName": "Studio A",
    "image": "webui-demo",
    "storageID": "models",
    "specName": "a100.1x",
    "template": {
      "ports": [
        {"port": 7860, "protocol": "TCP", "isPublic": false, "isProbe": true, "baseUrl": "/"}
      ],
      "envs": [{"name": "WEBUI_BASE_URL", "value": "/"}],
      "cmd": "exec python3 webui.py --listen",
      "volumes": [{"name": "data", "mountPath": "/data", "readOnly": false}]
    }
  })");
  ASSERT_TRUE(req.ok()) << req.status();
  EXPECT_EQ(req->instance_id(), "sd-1");
  EXPECT_EQ(req->tenant_id(), "studio-a");
  EXPECT_EQ(req->storage_id(), "models");
  EXPECT_EQ(req->spec_name(), "a100.1x");
  ASSERT_EQ(req->template_().ports_size(), 1);
  // The seed's TCP is Kubernetes' transport: its web UI is served as HTTP through the proxy.
  EXPECT_EQ(req->template_().ports(0).protocol(), instancepb::PROTOCOL_HTTP);
  EXPECT_TRUE(req->template_().ports(0).is_probe());
  EXPECT_EQ(req->template_().ports(0).base_url(), "/");
  EXPECT_EQ(req->template_().envs(0).name(), "WEBUI_BASE_URL");
  EXPECT_EQ(req->template_().cmd(), "exec python3 webui.py --listen");
  EXPECT_EQ(req->template_().volumes(0).mount_path(), "/data");
}

TEST_F(SeedCompatTest, ProtocolsThePlatformCannotServeAreNamed) {
  auto req = Seed<instancepb::CreateInstanceRequest>(
      "POST", "/gpu-instances",
      R"({"instanceID": "x", "specName": "a", "template": {"ports": [{"port": 53, "protocol": "UDP"}]}})");
  EXPECT_EQ(req.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(req.status().message(), HasSubstr("template.ports[0].protocol: UDP"));
}

TEST_F(SeedCompatTest, TheOtherSpellingsStillWork) {
  auto snake = Seed<stockpb::CreateStocksRequest>(
      "POST", "/stocks", R"({"spec_name": "a100.1x", "number": 2, "operation_id": "op-3"})");
  ASSERT_TRUE(snake.ok()) << snake.status();
  EXPECT_EQ(snake->operation_id(), "op-3");
  auto camel = Seed<instancepb::CreateInstanceRequest>(
      "POST", "/gpu-instances",
      R"({"instanceId": "i-1", "specName": "a", "template": {"ports": [{"port": 80, "protocol": "PROTOCOL_TCP"}]}})");
  ASSERT_TRUE(camel.ok()) << camel.status();
  EXPECT_EQ(camel->instance_id(), "i-1");
  EXPECT_EQ(camel->template_().ports(0).protocol(), instancepb::PROTOCOL_TCP);
}

TEST_F(SeedCompatTest, AnUnknownFieldIsStillNamed) {
  auto req =
      Seed<stockpb::CreateStocksRequest>("POST", "/stocks", R"({"number": 1, "specNameID": "a"})");
  EXPECT_EQ(req.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(req.status().message(), HasSubstr("specNameId"));
  auto not_json = Seed<stockpb::CreateStocksRequest>("POST", "/stocks", "{number: 1");
  EXPECT_EQ(not_json.status().code(), absl::StatusCode::kInvalidArgument);
}

// A hostile body nested a million deep is refused, not a stack overflow in the gateway.
TEST_F(SeedCompatTest, ABodyNestedTooDeepIsRefused) {
  const std::string deep =
      "{\"a\": " + std::string(1'000'000, '[') + std::string(1'000'000, ']') + "}";
  absl::StatusOr<std::string> out = SeedRequestBody(deep);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("nested deeper"));
}

TEST_F(SeedCompatTest, OnlyTheUnversionedPathsAreTheSeeds) {
  auto v1 = table_.Find("POST", "/v1/instances");
  ASSERT_TRUE(v1.has_value());
  EXPECT_FALSE(IsSeedRoute(*v1->route));
  auto seed = table_.Find("GET", "/gpu-instances/sd-1");
  ASSERT_TRUE(seed.has_value());
  EXPECT_TRUE(IsSeedRoute(*seed->route));
}

TEST(SeedAnswerTest, AnInstancesStateByTheSeedsNames) {
  const std::pair<instancepb::State, const char*> states[] = {
      {instancepb::STATE_PENDING, "init"},     {instancepb::STATE_READY, "ready"},
      {instancepb::STATE_RUNNING, "running"},  {instancepb::STATE_STOPPING, "stopping"},
      {instancepb::STATE_STOPPED, "stopped"},  {instancepb::STATE_FAILED, "failed"},
      {instancepb::STATE_DELETING, "deleting"}};
  for (const auto& [state, name] : states) {
    instancepb::Instance instance;
    instance.set_instance_id("sd-1");
    instance.set_state(state);
    nlohmann::json answer = nlohmann::json::parse(SeedAnswer(instance));
    EXPECT_EQ(answer["state"], name) << instancepb::State_Name(state);
    EXPECT_EQ(answer["instance_id"], "sd-1");
  }
  stockpb::DeleteStocksResponse other;
  other.set_deleted(2);
  EXPECT_EQ(nlohmann::json::parse(SeedAnswer(other))["deleted"], 2);
}

}  // namespace
}  // namespace gpuaas::gateway
