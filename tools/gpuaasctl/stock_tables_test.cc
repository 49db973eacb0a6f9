#include "tools/gpuaasctl/stock_tables.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "google/protobuf/text_format.h"

namespace gpuaas::ctl {
namespace {

using ::testing::HasSubstr;

template <class T>
T Parse(const std::string& text) {
  T message;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &message)) << text;
  return message;
}

TEST(SpecTableTest, OneWordPerCellAndTheDescriptionLast) {
  auto list = Parse<stockpb::ListSpecsResponse>(R"pb(
    specs {
      spec_name: "a100.2x"
      gpu_type: "A100-80GB"
      gpu_num: 2
      cpu: "16"
      memory: "64Gi"
      disk: "400Gi"
      price { micros_per_hour: 2400000 currency: "USD" }
      description: "two GPUs"
      create_time { seconds: 1800000000 }
    }
    specs {
      spec_name: "a100.mig3"
      gpu_type: "A100-80GB"
      gpu_num: 1
      mig_profile: "3g.40gb"
      cpu: "4"
      memory: "16Gi"
      disk: "100Gi"
      price { micros_per_hour: 1 currency: "EUR" }
      deprecated: true
    }
    specs {
      spec_name: "t4.quarter"
      gpu_type: "T4"
      gpu_num: 1
      gpu_share_milli: 250
      cpu: "500m"
      memory: "4Gi"
      disk: "20Gi"
      price { micros_per_hour: 125000 currency: "USD" }
    }
  )pb");
  EXPECT_EQ(SpecTable(list.specs()),
            "SPEC        GPU                  CPU   MEMORY  DISK   PRICE/H   CURRENCY  DEPRECATED  "
            "CREATED               DESCRIPTION\n"
            "a100.2x     2xA100-80GB          16    64Gi    400Gi  2.40      USD       no          "
            "2027-01-15T08:00:00Z  two GPUs\n"
            "a100.mig3   1xA100-80GB:3g.40gb  4     16Gi    100Gi  0.000001  EUR       yes         "
            "-                     -\n"
            "t4.quarter  0.25xT4              500m  4Gi     20Gi   0.125     USD       no          "
            "-                     -\n");
}

TEST(StockTableTest, StatesGpusAndHolders) {
  auto list = Parse<stockpb::ListStocksResponse>(R"pb(
    stocks {
      stock_id: "stk_1"
      spec_name: "a100.2x"
      node_id: "gpu-node-1"
      gpu_uuids: "GPU-a"
      gpu_uuids: "GPU-b"
      state: STOCK_STATE_CLAIMED
      instance_id: "inst-7"
    }
    stocks {
      stock_id: "stk_2"
      spec_name: "a100.mig3"
      node_id: "gpu-node-2"
      gpu_uuids: "GPU-c"
      mig_partition: "3g.40gb@4"
      state: STOCK_STATE_AVAILABLE
    }
  )pb");
  EXPECT_EQ(StockTable(list.stocks()),
            "STOCK  SPEC       NODE        STATE      GPUS         MIG        INSTANCE  CREATED\n"
            "stk_1  a100.2x    gpu-node-1  claimed    GPU-a,GPU-b  -          inst-7    -\n"
            "stk_2  a100.mig3  gpu-node-2  available  GPU-c        3g.40gb@4  -         -\n");
}

TEST(StockSummaryTableTest, CountsPerSpec) {
  auto summary = Parse<stockpb::GetStockSummaryResponse>(R"pb(
    counts { spec_name: "a100.2x" total: 10 available: 6 claimed: 3 unavailable: 1 }
  )pb");
  EXPECT_EQ(StockSummaryTable(summary),
            "SPEC     TOTAL  AVAILABLE  CLAIMED  UNAVAILABLE  DELETING\n"
            "a100.2x  10     6          3        1            0\n");
}

TEST(CreateStocksTextTest, ShortfallOnlyWhenShort) {
  auto all = Parse<stockpb::CreateStocksResponse>(R"pb(
    placed: 1
    stocks { stock_id: "stk_1" spec_name: "a100.2x" node_id: "n1" state: STOCK_STATE_AVAILABLE }
  )pb");
  EXPECT_EQ(CreateStocksText(all, 1, "op-1"),
            "placed:       1 of 1\n"
            "operation id: op-1\n"
            "\n"
            "STOCK  SPEC     NODE  STATE      GPUS  MIG  INSTANCE  CREATED\n"
            "stk_1  a100.2x  n1    available  -     -    -         -\n");
  auto some = Parse<stockpb::CreateStocksResponse>(R"pb(
    placed: 0
    shortfall_reason: "no ready node has 2 free A100-80GB"
  )pb");
  EXPECT_EQ(CreateStocksText(some, 4, "op-2"),
            "placed:       0 of 4\n"
            "shortfall:    no ready node has 2 free A100-80GB\n"
            "operation id: op-2\n");
}

TEST(DeleteStocksTextTest, SaysWhyFewer) {
  auto resp = Parse<stockpb::DeleteStocksResponse>(R"pb(
    deleted: 1 stock_ids: "stk_9"
  )pb");
  EXPECT_EQ(DeleteStocksText(resp, 3, "op-3"),
            "deleted:      1 of 3\n"
            "shortfall:    fewer were available (claimed stocks are never deleted)\n"
            "operation id: op-3\n"
            "\n"
            "STOCK\n"
            "stk_9\n");
}

stockpb::Node TwoGpuNode() {
  return Parse<stockpb::Node>(R"pb(
    node_id: "gpu-node-1"
    hostname: "gpu-node-1.dc1"
    cpu: "64"
    memory: "512Gi"
    disk: "2Ti"
    labels { key: "zone" value: "a" }
    labels { key: "rack" value: "r7" }
    agent_version: "0.1.0"
    state: NODE_STATE_READY
    cordoned: true
    heartbeat_time { seconds: 1800000000 }
    gpus {
      uuid: "GPU-a"
      model: "A100-80GB"
      memory_mib: 81920
      healthy: true
      utilization_percent: 37.4
      memory_used_mib: 1024
      temperature_celsius: 54.2
      power_watts: 250.6
    }
    gpus {
      uuid: "GPU-b"
      model: "A100-80GB"
      memory_mib: 81920
      mig_enabled: true
      healthy: false
      last_xid: 79
    }
  )pb");
}

TEST(NodeTableTest, GpusSummarisedAndUnhealthyCounted) {
  google::protobuf::RepeatedPtrField<stockpb::Node> nodes;
  *nodes.Add() = TwoGpuNode();
  stockpb::Node mixed = Parse<stockpb::Node>(R"pb(
    node_id: "mixed"
    state: NODE_STATE_NOT_READY
    gpus { model: "T4" healthy: true }
    gpus { model: "A100-80GB" healthy: true }
    gpus { model: "T4" healthy: true }
  )pb");
  *nodes.Add() = mixed;
  EXPECT_EQ(NodeTable(nodes),
            "NODE        HOSTNAME        STATUS          GPUS              UNHEALTHY  CPU  MEMORY  "
            "DISK  AGENT  HEARTBEAT\n"
            "gpu-node-1  gpu-node-1.dc1  ready,cordoned  2xA100-80GB       1          64   512Gi   "
            "2Ti   0.1.0  2027-01-15T08:00:00Z\n"
            "mixed       -               not-ready       1xA100-80GB,2xT4  0          -    -       "
            "-     -      -\n");
}

TEST(NodeDetailTest, FieldsThenOneRowPerGpuWithItsReadings) {
  const std::string text = NodeDetail(TwoGpuNode());
  EXPECT_THAT(text, HasSubstr("status:    ready,cordoned\n"));
  EXPECT_THAT(text, HasSubstr("labels:    rack=r7,zone=a\n"));  // sorted
  EXPECT_THAT(text, HasSubstr("INDEX  UUID   MODEL      MEMORY    MIG  HEALTH     LAST XID  UTIL  "
                              "MEM USED  TEMP  POWER\n"
                              "0      GPU-a  A100-80GB  81920MiB  no   healthy    -         37%   "
                              "1024MiB   54C   251W\n"
                              "1      GPU-b  A100-80GB  81920MiB  yes  unhealthy  79        0%    "
                              "0MiB      0C    0W\n"));
}

}  // namespace
}  // namespace gpuaas::ctl
