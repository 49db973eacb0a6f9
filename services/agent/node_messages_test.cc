#include "services/agent/node_messages.h"

#include <gtest/gtest.h>

namespace gpuaas::agent {
namespace {

std::vector<GpuStatus> TwoGpus() {
  GpuStatus a{.info = {.index = 0,
                       .uuid = "GPU-a",
                       .nvml_name = "NVIDIA A100-SXM4-80GB",
                       .model = "A100-80GB",
                       .memory_mib = 81920,
                       .mig_enabled = true},
              .reading = {.utilization_percent = 87,
                          .memory_used_mib = 20480,
                          .temperature_celsius = 71,
                          .power_watts = 250.5}};
  GpuStatus b{.info = {.index = 1, .uuid = "GPU-b", .model = "T4", .memory_mib = 15360},
              .healthy = false,
              .last_xid = 79};
  return {a, b};
}

TEST(NodeMessagesTest, BuildsTheRegistration) {
  NodeIdentity id{.node_id = "gpu-7",
                  .hostname = "host7",
                  .labels = {{"zone", "eu-1"}},
                  .agent_version = "0.1.0"};
  HostCapacity cap{
      .cpu_millis = 64000, .memory_bytes = int64_t{512} << 30, .disk_bytes = int64_t{3} << 39};
  stock::v1::Node node = BuildNode(id, cap, TwoGpus());
  EXPECT_EQ(node.node_id(), "gpu-7");
  EXPECT_EQ(node.hostname(), "host7");
  EXPECT_EQ(node.cpu(), "64");
  EXPECT_EQ(node.memory(), "512Gi");
  EXPECT_EQ(node.disk(), "1536Gi");
  EXPECT_EQ(node.labels().at("zone"), "eu-1");
  EXPECT_EQ(node.agent_version(), "0.1.0");
  ASSERT_EQ(node.gpus_size(), 2);
  EXPECT_EQ(node.gpus(0).uuid(), "GPU-a");
  EXPECT_EQ(node.gpus(0).model(), "A100-80GB");
  EXPECT_EQ(node.gpus(0).memory_mib(), 81920);
  EXPECT_TRUE(node.gpus(0).mig_enabled());
  EXPECT_TRUE(node.gpus(0).healthy());
  EXPECT_EQ(node.gpus(0).power_watts(), 250.5);
  EXPECT_FALSE(node.gpus(1).healthy());
  EXPECT_EQ(node.gpus(1).last_xid(), 79);
  EXPECT_EQ(node.state(), stock::v1::NODE_STATE_UNSPECIFIED) << "the service's to set";
}

TEST(NodeMessagesTest, BuildsAHeartbeat) {
  stock::v1::HeartbeatRequest beat = BuildHeartbeat("gpu-7", TwoGpus());
  EXPECT_EQ(beat.node_id(), "gpu-7");
  ASSERT_EQ(beat.gpus_size(), 2);
  EXPECT_EQ(beat.gpus(0).uuid(), "GPU-a");
  EXPECT_EQ(beat.gpus(0).utilization_percent(), 87);
  EXPECT_EQ(beat.gpus(0).memory_used_mib(), 20480);
  EXPECT_EQ(beat.gpus(0).temperature_celsius(), 71);
  EXPECT_TRUE(beat.gpus(0).healthy());
  EXPECT_FALSE(beat.gpus(1).healthy());
  EXPECT_EQ(beat.gpus(1).last_xid(), 79);
}

}  // namespace
}  // namespace gpuaas::agent
