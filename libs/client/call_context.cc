#include "libs/client/call_context.h"

#include <algorithm>
#include <chrono>

#include "absl/time/clock.h"

namespace gpuaas::client {
namespace {

constexpr std::string_view kAuthorizationKey = "authorization";
constexpr std::string_view kBearerPrefix = "Bearer ";

}  // namespace

absl::Time IncomingDeadline(const grpc::ServerContextBase& incoming) {
  // gRPC reports "no deadline" as the largest time point, which absl would read as a date.
  const std::chrono::system_clock::time_point deadline = incoming.deadline();
  if (deadline == std::chrono::system_clock::time_point::max()) {
    return absl::InfiniteFuture();
  }
  return absl::FromChrono(deadline);
}

absl::Time DeriveDeadline(absl::Time now, absl::Duration timeout, absl::Time parent_deadline) {
  const absl::Time own = now + timeout;
  if (parent_deadline == absl::InfiniteFuture()) {
    return own;
  }
  return std::min(own, parent_deadline - kDeadlineMargin);
}

CallerCredentials CallerCredentials::FromIncoming(const grpc::ServerContextBase& incoming) {
  CallerCredentials caller{.deadline = IncomingDeadline(incoming)};
  const auto& metadata = incoming.client_metadata();
  auto it = metadata.find(grpc::string_ref(kAuthorizationKey.data(), kAuthorizationKey.size()));
  if (it != metadata.end()) {
    caller.authorization.assign(it->second.data(), it->second.size());
  }
  return caller;
}

ForwardedClient ForwardedClient::FromIncoming(const grpc::ServerContextBase& incoming) {
  const auto& metadata = incoming.client_metadata();
  auto value = [&](std::string_view key) {
    auto it = metadata.find(grpc::string_ref(key.data(), key.size()));
    return it == metadata.end() ? std::string() : std::string(it->second.data(), it->second.size());
  };
  return ForwardedClient{.address = value(kClientAddressKey),
                         .forwarder_authorization = value(kForwarderKey)};
}

CallContext CallContext::FromIncoming(const grpc::ServerContextBase& incoming) {
  CallContext call;
  call.incoming_ = &incoming;
  call.parent_deadline_ = IncomingDeadline(incoming);
  return call;
}

CallContext CallContext::FromDeadline(absl::Time deadline) {
  CallContext call;
  call.parent_deadline_ = deadline;
  return call;
}

CallContext CallContext::OnBehalf(const CallerCredentials& caller) {
  return FromDeadline(caller.deadline).set_bearer_token(caller.authorization);
}

CallContext& CallContext::set_bearer_token(std::string_view token) {
  if (token.empty() || token.starts_with(kBearerPrefix)) {
    authorization_ = std::string(token);
  } else {
    authorization_ = std::string(kBearerPrefix) + std::string(token);
  }
  return *this;
}

CallContext& CallContext::set_forwarded_client(std::string_view forwarder_token,
                                               std::string_view address) {
  if (forwarder_token.empty() || address.empty()) return *this;
  forwarder_authorization_ = std::string(kBearerPrefix) + std::string(forwarder_token);
  forwarded_address_ = std::string(address);
  return *this;
}

CallContext& CallContext::set_timeout(absl::Duration timeout) {
  timeout_ = timeout;
  return *this;
}

CallContext& CallContext::set_cancellation(Cancellation& cancellation) {
  cancellation_ = &cancellation;
  return *this;
}

absl::Time CallContext::Deadline(absl::Time now, absl::Duration default_timeout) const {
  return DeriveDeadline(now, timeout_.value_or(default_timeout), parent_deadline_);
}

std::unique_ptr<grpc::ClientContext> CallContext::NewClientContext(
    absl::Duration default_timeout) const {
  // FromServerContext makes the outgoing call a child of the incoming one in gRPC core: its
  // deadline is capped by the parent's and cancelling the parent cancels it. It takes any
  // ServerContextBase, so sync and callback servers alike.
  std::unique_ptr<grpc::ClientContext> ctx =
      incoming_ != nullptr ? grpc::ClientContext::FromServerContext(*incoming_)
                           : std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(absl::ToChronoTime(Deadline(absl::Now(), default_timeout)));
  if (!authorization_.empty()) {
    ctx->AddMetadata(std::string(kAuthorizationKey), authorization_);
  }
  if (!forwarded_address_.empty()) {
    ctx->AddMetadata(std::string(kForwarderKey), forwarder_authorization_);
    ctx->AddMetadata(std::string(kClientAddressKey), forwarded_address_);
  }
  return ctx;
}

}  // namespace gpuaas::client
