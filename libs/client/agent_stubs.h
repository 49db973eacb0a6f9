// The stubs the instance service calls node agents with: one per agent address ("host:port"),
// made on first use and kept (nodes are few, and a node's address changes rarely), each over a
// channel the caller's factory opens (the service's TLS settings). Thread-safe.
#pragma once

#include <grpcpp/channel.h>

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace gpuaas::client {

using AgentChannelFactory =
    std::function<absl::StatusOr<std::shared_ptr<grpc::Channel>>(const std::string& address)>;

template <class Service>
class AgentStubs final {
 public:
  using Stub = typename Service::StubInterface;

  explicit AgentStubs(AgentChannelFactory open_channel) : open_channel_(std::move(open_channel)) {}

  // The stub for `address`; it lives as long as this object. Error: UNAVAILABLE naming the
  // address when no channel could be opened. Never blocks on the network.
  absl::StatusOr<Stub*> For(const std::string& address) {
    absl::MutexLock lock(&mu_);
    auto it = stubs_.find(address);
    if (it != stubs_.end()) return it->second.get();
    absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = open_channel_(address);
    if (!channel.ok()) {
      return absl::UnavailableError(
          absl::StrCat("the node's agent at ", address, ": ", channel.status().message()));
    }
    std::unique_ptr<Stub>& stub = stubs_[address];
    stub = Service::NewStub(*channel);
    return stub.get();
  }

 private:
  AgentChannelFactory open_channel_;
  absl::Mutex mu_;
  std::map<std::string, std::unique_ptr<Stub>> stubs_ ABSL_GUARDED_BY(mu_);
};

}  // namespace gpuaas::client
