// Two gpuaas-stock processes on one database, 8 clients creating and deleting stocks through both
// at once: afterwards no node and no GPU is over capacity (an SQL check independent of the
// service), and the stocks counted are exactly those created minus those deleted.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "libs/client/channel.h"
#include "libs/testing/service_dsn.h"
#include "libs/testing/temp_dir.h"
#include "tests/common/child_process.h"
#include "tests/stock/stock_test_base.h"

namespace gpuaas::stock::testing {
namespace {

using gpuaas::testing::ChildProcess;
using gpuaas::testing::FreePort;
using gpuaas::testing::WaitServing;

using StockReplicasProcessTest = StockTest;

TEST_F(StockReplicasProcessTest, EightClientsOnTwoProcessesNeverOverbook) {
  gpuaas::testing::TempDir dir;
  std::vector<std::unique_ptr<ChildProcess>> replicas;
  std::vector<std::unique_ptr<pb::StockService::Stub>> stubs;
  for (int i = 0; i < 2; ++i) {
    const std::string addr = "127.0.0.1:" + std::to_string(FreePort());
    replicas.push_back(std::make_unique<ChildProcess>(
        std::vector<std::string>{GPUAAS_STOCK_BINARY, "--listen=" + addr,
                                 "--metrics-listen=127.0.0.1:0",
                                 "--db-dsn=" + gpuaas::testing::ServiceDsn(dsn(), "stock"),
                                 "--auth-addr=" + stack_->address()},
        (dir.path() / ("stock-" + std::to_string(i) + ".log")).string()));
    ASSERT_TRUE(WaitServing(addr));
    stubs.push_back(pb::StockService::NewStub(*client::OpenChannel(addr, {})));
  }
  // Nodes and specs arrive after both replicas loaded their (empty) views: they learn of them
  // from the tables.
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(Register(SimulatedNode("n" + std::to_string(i), 8, "A100-80GB", "64")).ok());
  }
  ASSERT_TRUE(CreateSpec(MakeSpec("a100.1x", "A100-80GB", 1)).ok());
  ASSERT_TRUE(CreateSpec(MakeSpec("a100.half", "A100-80GB", 1, "4", "8Gi", "10Gi", 500)).ok());
  ASSERT_TRUE(CreateSpec(MakeSpec("a100.4x", "A100-80GB", 4, "16")).ok());

  std::atomic<int> placed{0}, deleted{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < 8; ++c) {
    clients.emplace_back([&, c] {
      pb::StockService::Stub& stub = *stubs[c % 2];
      const char* spec = c % 3 == 0 ? "a100.half" : (c % 3 == 1 ? "a100.1x" : "a100.4x");
      for (int round = 0; round < 8; ++round) {
        pb::CreateStocksRequest create;
        create.set_spec_name(spec);
        create.set_number(3);
        create.set_allow_partial(true);
        pb::CreateStocksResponse created;
        grpc::Status s = stub.CreateStocks(Ctx(admin_).get(), create, &created);
        EXPECT_TRUE(s.ok() || s.error_code() == grpc::StatusCode::ABORTED) << s.error_message();
        if (s.ok()) placed += created.placed();
        if (round % 2) {
          pb::DeleteStocksRequest del;
          del.set_spec_name(spec);
          del.set_number(2);
          pb::DeleteStocksResponse gone;
          s = stub.DeleteStocks(Ctx(admin_).get(), del, &gone);
          EXPECT_TRUE(s.ok()) << s.error_message();
          deleted += gone.deleted();
        }
      }
    });
  }
  for (std::thread& t : clients) t.join();
  EXPECT_GT(placed, 0);
  EXPECT_EQ(Overbooked(), std::vector<std::string>{});
  int64_t total = 0;
  for (const char* spec : {"a100.1x", "a100.half", "a100.4x"}) total += Summary(spec).total();
  EXPECT_EQ(total, placed - deleted);
  for (auto& r : replicas) EXPECT_EQ(r->Terminate(), 0);
}

}  // namespace
}  // namespace gpuaas::stock::testing
