// The replica kill drill (issue 25) for the stock service: two gpuaas-stock processes on one
// database behind one address, "127.0.0.1:a,127.0.0.1:b", and a client::StockClient over it.
// Four clients call steadily (GetSpec and ListStocks, which the channel's retry policy repeats;
// CreateStocks and DeleteStocks with operation ids, which the typed client repeats); the first
// replica gets SIGKILL in the middle (tests/common/replica_kill_drill.h). No call may fail, and
// the survivor serves every call made after the kill. The rolling restart drill restarts each
// replica in turn with SIGTERM under the same calls, the creates and deletes without operation
// ids (sent once): no call may fail. Prints the numbers bench/RESULTS.md quotes.
#include <gtest/gtest.h>

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "libs/client/channel.h"
#include "libs/client/stock_client.h"
#include "libs/testing/service_dsn.h"
#include "libs/testing/status_matchers.h"
#include "libs/testing/temp_dir.h"
#include "tests/common/replica_kill_drill.h"
#include "tests/stock/stock_test_base.h"

namespace gpuaas::stock::testing {
namespace {

using gpuaas::testing::DrillResult;
using gpuaas::testing::ReplicaKillDrill;
using gpuaas::testing::ReplicaProcess;
using gpuaas::testing::RollingRestartDrill;
using gpuaas::testing::TimedCall;

class StockReplicaDrillTest : public StockTest {
 protected:
  void SetUp() override {
    StockTest::SetUp();
    if (IsSkipped()) {
      return;
    }
    replicas_ =
        gpuaas::testing::StartReplicas(GPUAAS_STOCK_BINARY, "stock",
                                       {"--db-dsn=" + gpuaas::testing::ServiceDsn(dsn(), "stock"),
                                        "--auth-addr=" + stack_->address()},
                                       dir_.path());
    ASSERT_EQ(replicas_.size(), 2u);
    for (int i = 0; i < 2; ++i) {
      ASSERT_TRUE(Register(SimulatedNode(absl::StrCat("n", i), 8, "A100-80GB", "64")).ok());
    }
    ASSERT_TRUE(CreateSpec(MakeSpec("a100.1x", "A100-80GB", 1)).ok());
    ASSERT_OK_AND_ASSIGN(std::shared_ptr<grpc::Channel> channel,
                         client::OpenChannel(gpuaas::testing::AddressList(replicas_), {}));
    stock_ = std::make_unique<client::StockClient>(channel, absl::Seconds(5));
    call_ = client::CallContext().set_bearer_token(admin_);
  }

  // Reads the channel repeats, and creates and deletes with operation ids that the typed client
  // repeats; with `once`, without them, so they are sent once (a drained replica must not fail
  // them).
  gpuaas::testing::DrillRound Round(bool once) {
    return [this, once](int client, int round, const TimedCall& timed) {
      const auto key = [&](const char* what) {
        return once ? std::string() : absl::StrCat(what, "-", client, "-", round);
      };
      timed("GetSpec", [&] {
        pb::GetSpecRequest req;
        req.set_spec_name("a100.1x");
        return stock_->GetSpec(req, call_).status();
      });
      timed("ListStocks", [&] {
        pb::ListStocksRequest req;
        req.set_spec_name("a100.1x");
        return stock_->ListStocks(req, call_).status();
      });
      timed("CreateStocks", [&] {
        pb::CreateStocksRequest req;
        req.set_spec_name("a100.1x");
        req.set_number(1);
        req.set_allow_partial(true);
        req.set_operation_id(key("create"));
        return stock_->CreateStocks(req, call_).status();
      });
      timed("DeleteStocks", [&] {
        pb::DeleteStocksRequest req;
        req.set_spec_name("a100.1x");
        req.set_number(1);
        req.set_operation_id(key("delete"));
        return stock_->DeleteStocks(req, call_).status();
      });
    };
  }

  gpuaas::testing::TempDir dir_;
  std::vector<ReplicaProcess> replicas_;
  std::unique_ptr<client::StockClient> stock_;
  client::CallContext call_;
};

TEST_F(StockReplicaDrillTest, KillNineOneReplicaUnderLoadFailsNoCall) {
  const DrillResult r = ReplicaKillDrill(replicas_).Run(4, Round(/*once=*/false));
  std::printf("stock replica kill drill: %s\n", r.Summary().c_str());
  gpuaas::testing::ExpectNoCallLost(r);
  EXPECT_EQ(Overbooked(), std::vector<std::string>{});
  EXPECT_EQ(replicas_[1].process->Terminate(), 0);
}

TEST_F(StockReplicaDrillTest, RollingRestartUnderLoadFailsNoCall) {
  const DrillResult r = RollingRestartDrill(replicas_).Run(4, Round(/*once=*/true));
  std::printf("stock rolling restart drill: %s\n", r.Summary().c_str());
  gpuaas::testing::ExpectNoCallFailedByRestarts(r);
  EXPECT_EQ(Overbooked(), std::vector<std::string>{});
}

}  // namespace
}  // namespace gpuaas::stock::testing
