// The services behind the gateway: which channel serves each gRPC service, and one call on it
// with whatever message types the route names (the request and answer types come from the
// method's descriptor, so one code path serves every RPC).
#pragma once

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>

#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"

namespace gpuaas::gateway {

class Backends final {
 public:
  // `service` ("gpuaas.stock.v1.StockService") is served over `channel`.
  void Add(const std::string& service, std::shared_ptr<grpc::Channel> channel);

  // The channel serving `service`, or null (for what is not a generic call: the terminal).
  std::shared_ptr<grpc::Channel> Channel(const std::string& service) const;

  // Calls unary `method` with `request` on `ctx` (deadline and credentials set by the caller);
  // the answer, or the service's status (UNAVAILABLE when no backend serves the service).
  grpc::Status Call(const google::protobuf::MethodDescriptor& method,
                    const google::protobuf::Message& request, grpc::ClientContext& ctx,
                    std::unique_ptr<google::protobuf::Message>& response) const;

  // A server-streaming call, read message by message; end it early with ctx.TryCancel().
  class Stream {
   public:
    virtual ~Stream() = default;
    // The next message; null at the end (then call Finish).
    virtual std::unique_ptr<google::protobuf::Message> Read() = 0;
    virtual grpc::Status Finish() = 0;
  };
  absl::StatusOr<std::unique_ptr<Stream>> OpenStream(
      const google::protobuf::MethodDescriptor& method, const google::protobuf::Message& request,
      grpc::ClientContext& ctx) const;

 private:
  const grpc::Channel* ChannelFor(const google::protobuf::MethodDescriptor& method) const;

  absl::flat_hash_map<std::string, std::shared_ptr<grpc::Channel>> channels_;
};

}  // namespace gpuaas::gateway
