// Keeps a RouteTable current from one WatchInstances stream of every tenant's instances (the
// proxy's service token). After a break it resumes from the last revision seen; when the
// service no longer remembers that far back (OUT_OF_RANGE) it lists every instance again and
// watches from the list's revision. The stream is reopened with a fresh token once the old
// one is due for refresh, so an expired token never ends the watch. Each instance that starts
// routing gets its proxy token (AccessService.GetProxyToken) before its routes go in the table,
// so no request reaches its workload without it; when the token cannot be had, the watch
// retries from the same revision.
#pragma once

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <memory>

#include "absl/time/time.h"
#include "libs/client/access_client.h"
#include "libs/client/access_tokens.h"
#include "libs/client/cancellation.h"
#include "libs/client/instance_client.h"
#include "libs/common/stop_signal.h"
#include "services/proxy/route_table.h"

namespace gpuaas::proxy {

class RouteWatcher final {
 public:
  // `tokens` and `routes` must outlive this object.
  RouteWatcher(std::shared_ptr<grpc::Channel> instance_channel, client::AccessTokens& tokens,
               RouteTable& routes);

  // Watches until Stop(); retries with backoff (up to 5 s) after errors. Blocks.
  void Run();
  // Ends Run() soon; thread-safe.
  void Stop();

 private:
  // One stream: OK when it ended for a reason worth retrying at once (token refresh).
  absl::Status WatchOnce();
  // ListInstances every page into the table; sets revision_ to the list's revision.
  absl::Status ListAll();
  // The proxy token of `instance` when it routes any port ("" when it routes none): the table's
  // when it routes already, else the instance service's.
  absl::StatusOr<std::string> ProxyTokenFor(const ::gpuaas::instance::v1::Instance& instance,
                                            bool reuse);

  client::InstanceClient instances_;
  client::AccessClient access_;
  RouteTable& routes_;
  int64_t revision_ = 0;

  StopSignal stop_;
  client::Cancellation cancel_;  // Stop's: ends the call in flight
};

}  // namespace gpuaas::proxy
