// stock_bench's connection to a running stock service: channels to auth and stock found the way
// every gpuaas binary finds them (flags, GPUAAS_*_ADDR, .gpuaas/stack.env), an access token from
// logging in (the platform admin by default, who may also register nodes and claim stock), and
// blocking helpers for the calls the benchmarks set up with. The timed calls go through the
// stubs directly, with a context from NewContext().
#pragma once

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gpuaas/stock/v1/stock.grpc.pb.h"
#include "libs/client/endpoint.h"

namespace gpuaas::stock::bench {

namespace pb = ::gpuaas::stock::v1;

struct ConnectFlags {
  std::string auth_addr, stock_addr;  // empty: GPUAAS_AUTH_ADDR / GPUAAS_STOCK_ADDR, stack.env
  std::string user, password_file;    // empty: GPUAAS_ADMIN_USER / GPUAAS_ADMIN_PASSWORD_FILE
  std::string ca_file, cert_file, key_file;
  absl::Duration timeout = absl::Seconds(30);  // deadline of each call
};

class BenchClient final {
 public:
  // Resolves both endpoints, opens one channel to each (plus `extra_channels` more to stock, for
  // spreading load over connections) and logs in. Blocks on the login. Errors: the resolver's,
  // the login's (UNAUTHENTICATED, UNAVAILABLE, ...).
  static absl::StatusOr<std::unique_ptr<BenchClient>> Connect(const ConnectFlags& flags,
                                                              int extra_channels = 0);

  pb::StockService::Stub& stock(int channel = 0) { return *stock_[channel % stock_.size()]; }
  pb::NodeAgentService::Stub& agent() { return *agent_; }
  int channels() const { return static_cast<int>(stock_.size()); }
  const std::string& stock_address() const { return stock_endpoint_.address; }

  // A context for one call: the deadline and the bearer token (logged in again when it is older
  // than a few minutes, so long runs outlive the token's lifetime). Thread-safe.
  std::unique_ptr<grpc::ClientContext> NewContext();
  // The current token, for callers that build their own contexts. Thread-safe.
  std::string Token();

  // Setup helpers; each blocks and turns the gRPC status into an absl::Status.
  absl::Status RegisterNode(const pb::Node& node);
  // OK when the spec exists already as asked (CreateSpec is idempotent by name).
  absl::Status EnsureSpec(const pb::Spec& spec);
  // Available + claimed + ... stocks of `spec`.
  absl::StatusOr<pb::StockCount> Summary(const std::string& spec);
  // Every stock of every spec, summed.
  absl::StatusOr<int64_t> TotalStocks();
  // Every registered node, paging through ListNodes.
  absl::StatusOr<std::vector<pb::Node>> AllNodes();

 private:
  BenchClient() = default;
  absl::Status Login() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  ConnectFlags flags_;
  std::string password_;
  client::Endpoint auth_endpoint_, stock_endpoint_;
  std::shared_ptr<grpc::Channel> auth_channel_;
  std::vector<std::unique_ptr<pb::StockService::Stub>> stock_;
  std::unique_ptr<pb::NodeAgentService::Stub> agent_;
  absl::Mutex mu_;
  std::string token_ ABSL_GUARDED_BY(mu_);
  absl::Time token_time_ ABSL_GUARDED_BY(mu_);
};

// grpc::Status as absl::Status, with `what` in front of the message.
absl::Status FromGrpc(const grpc::Status& s, const std::string& what);

}  // namespace gpuaas::stock::bench
