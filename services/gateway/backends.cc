#include "services/gateway/backends.h"

#include <grpcpp/impl/client_unary_call.h>
#include <grpcpp/impl/rpc_method.h>
#include <grpcpp/support/sync_stream.h>

#include "absl/strings/str_cat.h"

namespace gpuaas::gateway {
namespace {

using google::protobuf::Message;
using google::protobuf::MethodDescriptor;

std::string MethodPath(const MethodDescriptor& method) {
  return absl::StrCat("/", method.service()->full_name(), "/", method.name());
}

std::unique_ptr<Message> NewMessage(const google::protobuf::Descriptor& type) {
  return std::unique_ptr<Message>(
      google::protobuf::MessageFactory::generated_factory()->GetPrototype(&type)->New());
}

// The calls that generated stubs make, with the abstract Message as both types: gRPC's
// protobuf serialization takes any Message, so the route's descriptor picks the real types.
class MessageStream final : public Backends::Stream {
 public:
  MessageStream(const grpc::Channel& channel, const MethodDescriptor& method,
                const Message& request, grpc::ClientContext& ctx)
      : method_(method),
        reader_(grpc::internal::ClientReaderFactory<Message>::Create(
            const_cast<grpc::Channel*>(&channel),
            grpc::internal::RpcMethod((path_ = MethodPath(method)).c_str(),
                                      grpc::internal::RpcMethod::SERVER_STREAMING),
            &ctx, request)) {}

  std::unique_ptr<Message> Read() override {
    std::unique_ptr<Message> msg = NewMessage(*method_.output_type());
    return reader_->Read(msg.get()) ? std::move(msg) : nullptr;
  }
  grpc::Status Finish() override { return reader_->Finish(); }

 private:
  const MethodDescriptor& method_;
  std::string path_;
  std::unique_ptr<grpc::ClientReader<Message>> reader_;
};

}  // namespace

void Backends::Add(const std::string& service, std::shared_ptr<grpc::Channel> channel) {
  channels_[service] = std::move(channel);
}

const grpc::Channel* Backends::ChannelFor(const MethodDescriptor& method) const {
  auto it = channels_.find(method.service()->full_name());
  return it == channels_.end() ? nullptr : it->second.get();
}

grpc::Status Backends::Call(const MethodDescriptor& method, const Message& request,
                            grpc::ClientContext& ctx, std::unique_ptr<Message>& response) const {
  const grpc::Channel* channel = ChannelFor(method);
  if (channel == nullptr) {
    return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                        absl::StrCat("no backend serves ", method.service()->full_name()));
  }
  response = NewMessage(*method.output_type());
  const std::string path = MethodPath(method);
  return grpc::internal::BlockingUnaryCall<Message, Message>(
      const_cast<grpc::Channel*>(channel),
      grpc::internal::RpcMethod(path.c_str(), grpc::internal::RpcMethod::NORMAL_RPC), &ctx, request,
      response.get());
}

absl::StatusOr<std::unique_ptr<Backends::Stream>> Backends::OpenStream(
    const MethodDescriptor& method, const Message& request, grpc::ClientContext& ctx) const {
  const grpc::Channel* channel = ChannelFor(method);
  if (channel == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("no backend serves ", method.service()->full_name()));
  }
  return std::make_unique<MessageStream>(*channel, method, request, ctx);
}

std::shared_ptr<grpc::Channel> Backends::Channel(const std::string& service) const {
  auto it = channels_.find(service);
  return it == channels_.end() ? nullptr : it->second;
}

}  // namespace gpuaas::gateway
