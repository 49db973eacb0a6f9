// A minimal NodeAgentService for the agent's process tests: it records every RegisterNode and
// heartbeat (with the bearer token sent), answers as stock.proto says (NOT_FOUND for a node it
// does not know), and can restart on the same port or forget a node. It stands in for
// gpuaas-stock until the service's own NodeAgentService lands; the tests observe the agent only
// through what it sends here and through the agent's /metrics.
#pragma once

#include <grpcpp/grpcpp.h>

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gpuaas/stock/v1/stock.grpc.pb.h"

namespace gpuaas::agent::testing {

namespace stockpb = ::gpuaas::stock::v1;

struct Registration {
  stockpb::Node node;
  std::string authorization;  // the header as sent
};

class FakeNodeAgentService final : public stockpb::NodeAgentService::Service {
 public:
  explicit FakeNodeAgentService(absl::Duration heartbeat_interval)
      : heartbeat_interval_(heartbeat_interval) {}

  grpc::Status RegisterNode(grpc::ServerContext* ctx, const stockpb::RegisterNodeRequest* req,
                            stockpb::RegisterNodeResponse* resp) override;
  grpc::Status Heartbeat(grpc::ServerContext* ctx,
                         grpc::ServerReaderWriter<stockpb::HeartbeatResponse,
                                                  stockpb::HeartbeatRequest>* stream) override;

  // The next heartbeat of `node_id` ends its stream NOT_FOUND, until it registers again.
  void Forget(const std::string& node_id);

  std::vector<Registration> registrations() const;
  // The authorization header of every Heartbeat stream opened, in order.
  std::vector<std::string> stream_authorizations() const;
  std::vector<stockpb::HeartbeatRequest> heartbeats() const;
  // Waits until `pred(registrations, heartbeats)` holds; false after `timeout`.
  bool WaitFor(const std::function<bool(const std::vector<Registration>&,
                                        const std::vector<stockpb::HeartbeatRequest>&)>& pred,
               absl::Duration timeout = absl::Seconds(30)) const;

 private:
  const absl::Duration heartbeat_interval_;
  mutable absl::Mutex mu_;
  std::vector<Registration> registrations_ ABSL_GUARDED_BY(mu_);
  std::vector<stockpb::HeartbeatRequest> heartbeats_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> stream_authorizations_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> known_ ABSL_GUARDED_BY(mu_);
};

// The service above (or none: every call answers UNIMPLEMENTED, as a stock service without
// NodeAgentService does) served on 127.0.0.1:port.
class FakeStock final {
 public:
  FakeStock(int port, bool implemented = true,
            absl::Duration heartbeat_interval = absl::Milliseconds(200));
  // Shuts down, cancelling open streams.
  ~FakeStock();

  FakeNodeAgentService& service() { return service_; }
  bool started() const { return server_ != nullptr; }

 private:
  FakeNodeAgentService service_;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace gpuaas::agent::testing
