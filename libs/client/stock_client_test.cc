// StockClient against an in-process fake of the stock service: every method reaches its own
// RPC with the bearer header and a deadline, and errors come back with code and message. The
// same client against the real service, on PostgreSQL: tests/stock/stock_client_test.cc.
#include "libs/client/stock_client.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "libs/client/call_context.h"
#include "libs/client/channel.h"
#include "libs/testing/status_matchers.h"

namespace gpuaas::client {
namespace {

using ::gpuaas::testing::StatusIs;

// As in auth_client_test.cc: what a server sees of a deadline is off by a few milliseconds.
constexpr absl::Duration kWireSlack = absl::Milliseconds(50);

struct Seen {
  std::string method;
  std::optional<std::string> authorization;  // nullopt: no header
  absl::Time deadline = absl::InfinitePast();
};

// Answers every RPC with `reply_` after noting which one was called.
class FakeStock final : public stockpb::StockService::Service {
 public:
// One override per RPC; the generated signatures differ only in their types.
#define GPUAAS_FAKE_RPC(Name, Req, Resp)                                                      \
  grpc::Status Name(grpc::ServerContext* ctx, const stockpb::Req*, stockpb::Resp*) override { \
    return Record(#Name, *ctx);                                                               \
  }
  GPUAAS_FAKE_RPC(CreateSpec, CreateSpecRequest, Spec)
  GPUAAS_FAKE_RPC(GetSpec, GetSpecRequest, Spec)
  GPUAAS_FAKE_RPC(ListSpecs, ListSpecsRequest, ListSpecsResponse)
  GPUAAS_FAKE_RPC(UpdateSpec, UpdateSpecRequest, Spec)
  GPUAAS_FAKE_RPC(DeleteSpec, DeleteSpecRequest, DeleteSpecResponse)
  GPUAAS_FAKE_RPC(CreateStocks, CreateStocksRequest, CreateStocksResponse)
  GPUAAS_FAKE_RPC(DeleteStocks, DeleteStocksRequest, DeleteStocksResponse)
  GPUAAS_FAKE_RPC(ListStocks, ListStocksRequest, ListStocksResponse)
  GPUAAS_FAKE_RPC(SearchStocks, SearchStocksRequest, SearchStocksResponse)
  GPUAAS_FAKE_RPC(GetStockSummary, GetStockSummaryRequest, GetStockSummaryResponse)
  GPUAAS_FAKE_RPC(ClaimStock, ClaimStockRequest, Stock)
  GPUAAS_FAKE_RPC(ReleaseStock, ReleaseStockRequest, ReleaseStockResponse)
  GPUAAS_FAKE_RPC(ListNodes, ListNodesRequest, ListNodesResponse)
  GPUAAS_FAKE_RPC(GetNode, GetNodeRequest, Node)
  GPUAAS_FAKE_RPC(CordonNode, CordonNodeRequest, Node)
  GPUAAS_FAKE_RPC(UncordonNode, UncordonNodeRequest, Node)
  GPUAAS_FAKE_RPC(DrainNode, DrainNodeRequest, Node)
#undef GPUAAS_FAKE_RPC

  Seen seen() const {
    absl::MutexLock lock(&mu_);
    return seen_;
  }

  grpc::Status reply_ = grpc::Status::OK;

 private:
  grpc::Status Record(const char* method, const grpc::ServerContext& ctx) {
    Seen seen;
    seen.method = method;
    seen.deadline = IncomingDeadline(ctx);
    auto it = ctx.client_metadata().find("authorization");
    if (it != ctx.client_metadata().end()) {
      seen.authorization = std::string(it->second.data(), it->second.size());
    }
    absl::MutexLock lock(&mu_);
    seen_ = seen;
    return reply_;
  }

  mutable absl::Mutex mu_;
  Seen seen_ ABSL_GUARDED_BY(mu_);
};

// A client method called with a default request, reduced to its status.
using Call = std::function<absl::Status(const StockClient&, const CallContext&)>;

template <class Req, class Resp>
Call Bind(absl::StatusOr<Resp> (StockClient::*method)(const Req&, const CallContext&) const) {
  return [method](const StockClient& c, const CallContext& call) {
    return (c.*method)(Req(), call).status();
  };
}

// A method started without waiting (pending_call.h), then waited for.
template <class Req, class Resp>
Call BindStarted(PendingCall<Resp> (StockClient::*method)(const Req&, const CallContext&) const) {
  return [method](const StockClient& c, const CallContext& call) {
    return (c.*method)(Req(), call).Wait().status();
  };
}

// Every StockService RPC: the fake names what it received, so a client method wired to the
// wrong stub method fails here.
std::vector<std::pair<std::string, Call>> EveryMethod() {
  return {
      {"CreateSpec", Bind(&StockClient::CreateSpec)},
      {"GetSpec", Bind(&StockClient::GetSpec)},
      {"GetSpec", BindStarted(&StockClient::StartGetSpec)},
      {"ListSpecs", Bind(&StockClient::ListSpecs)},
      {"UpdateSpec", Bind(&StockClient::UpdateSpec)},
      {"DeleteSpec", Bind(&StockClient::DeleteSpec)},
      {"CreateStocks", Bind(&StockClient::CreateStocks)},
      {"DeleteStocks", Bind(&StockClient::DeleteStocks)},
      {"ListStocks", Bind(&StockClient::ListStocks)},
      {"SearchStocks", Bind(&StockClient::SearchStocks)},
      {"GetStockSummary", Bind(&StockClient::GetStockSummary)},
      {"ClaimStock", Bind(&StockClient::ClaimStock)},
      {"ReleaseStock", Bind(&StockClient::ReleaseStock)},
      {"ListNodes", Bind(&StockClient::ListNodes)},
      {"GetNode", Bind(&StockClient::GetNode)},
      {"CordonNode", Bind(&StockClient::CordonNode)},
      {"UncordonNode", Bind(&StockClient::UncordonNode)},
      {"DrainNode", Bind(&StockClient::DrainNode)},
  };
}

class StockClientTest : public ::testing::Test {
 protected:
  StockClientTest() {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&fake_);
    server_ = builder.BuildAndStart();
    channel_ = *OpenChannel("127.0.0.1:" + std::to_string(port), TlsOptions{});
  }
  ~StockClientTest() override { server_->Shutdown(); }

  FakeStock fake_;
  std::unique_ptr<grpc::Server> server_;
  std::shared_ptr<grpc::Channel> channel_;
};

TEST_F(StockClientTest, EveryMethodReachesItsRpcWithTokenAndDeadline) {
  StockClient stock(channel_, absl::Seconds(3));
  for (const auto& [name, call] : EveryMethod()) {
    SCOPED_TRACE(name);
    const absl::Time before = absl::Now();
    EXPECT_OK(call(stock, CallContext().set_bearer_token("tok-1")));
    const Seen seen = fake_.seen();
    EXPECT_EQ(seen.method, name);
    EXPECT_EQ(seen.authorization, "Bearer tok-1");
    EXPECT_GE(seen.deadline, before + absl::Seconds(3) - kWireSlack);
    EXPECT_LE(seen.deadline, absl::Now() + absl::Seconds(3) + kWireSlack);
  }
}

TEST_F(StockClientTest, ServerErrorsKeepCodeAndMessage) {
  fake_.reply_ = grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, "only 3 of 10 fit");
  StockClient stock(channel_);
  for (const auto& [name, call] : EveryMethod()) {
    SCOPED_TRACE(name);
    EXPECT_THAT(call(stock, CallContext()),
                StatusIs(absl::StatusCode::kResourceExhausted, "only 3 of 10 fit"));
  }
}

TEST(StockClientUnreachableTest, IsUnavailable) {
  auto channel = OpenChannel("unix:/nonexistent/gpuaas-stock-client-test.sock", TlsOptions{});
  ASSERT_OK(channel);
  EXPECT_THAT(StockClient(*channel).GetSpec({}), StatusIs(absl::StatusCode::kUnavailable));
}

}  // namespace
}  // namespace gpuaas::client
