// Test-only pieces shared by the libs/rpc tests: an Authenticator that accepts
// "Bearer good-<user>@<tenant>", the echo callback service built on Handler, channels and call
// contexts from libs/client, and a grpc.health.v1 client that needs no generated code.
#pragma once

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "gpuaas/testing/v1/echo.grpc.pb.h"
#include "libs/authz/verifier.h"
#include "libs/client/call_context.h"
#include "libs/client/channel.h"
#include "libs/rpc/handler.h"
#include "libs/rpc/status.h"

namespace gpuaas::rpc::test {

namespace pb = ::gpuaas::testing::v1;

class FakeAuthenticator final : public authz::Authenticator {
 public:
  absl::StatusOr<authz::Principal> Authenticate(std::string_view header) override {
    constexpr std::string_view kPrefix = "Bearer good-";
    if (!header.starts_with(kPrefix)) {
      return absl::UnauthenticatedError("invalid token");
    }
    std::string_view rest = header.substr(kPrefix.size());
    size_t at = rest.find('@');
    authz::Principal p;
    p.user_id = std::string(rest.substr(0, at));
    p.tenant_id = at == std::string_view::npos ? "" : std::string(rest.substr(at + 1));
    p.role = ::gpuaas::common::v1::ROLE_MEMBER;
    return p;
  }
};

class EchoService final : public pb::EchoService::CallbackService {
 public:
  explicit EchoService(Handler& handler) : handler_(handler) {}

  grpc::ServerUnaryReactor* Echo(grpc::CallbackServerContext* ctx, const pb::EchoRequest* req,
                                 pb::EchoResponse* resp) override {
    std::thread::id grpc_thread = std::this_thread::get_id();
    return handler_.Run(ctx, [this, req, resp, grpc_thread](const authz::Principal& p) {
      ran_on_grpc_thread_ = ran_on_grpc_thread_ || std::this_thread::get_id() == grpc_thread;
      resp->set_principal(PrincipalLabel(p));
      return Respond(*req, *resp);
    });
  }

  grpc::ServerUnaryReactor* PublicEcho(grpc::CallbackServerContext* ctx, const pb::EchoRequest* req,
                                       pb::EchoResponse* resp) override {
    return handler_.RunPublic(ctx, [this, req, resp] { return Respond(*req, *resp); });
  }

  int handled() const { return handled_; }
  bool ran_on_grpc_thread() const { return ran_on_grpc_thread_; }
  // Notified when a call with `block` set is inside its handler.
  absl::Notification& blocked_call_started() { return blocked_started_; }
  void ReleaseBlockedCalls() {
    if (!release_.HasBeenNotified()) {
      release_.Notify();
    }
  }

 private:
  absl::Status Respond(const pb::EchoRequest& req, pb::EchoResponse& resp) {
    ++handled_;
    if (req.block()) {
      blocked_started_.Notify();
      release_.WaitForNotification();
    }
    if (!req.throw_message().empty()) {
      throw std::runtime_error(req.throw_message());
    }
    if (req.error_code() != 0) {
      return absl::Status(static_cast<absl::StatusCode>(req.error_code()), req.error_message());
    }
    resp.set_message(req.message());
    return absl::OkStatus();
  }

  Handler& handler_;
  std::atomic<int> handled_{0};
  std::atomic<bool> ran_on_grpc_thread_{false};
  absl::Notification blocked_started_;
  absl::Notification release_;
};

// A plaintext channel to a test server on this host. Plaintext channels cannot fail to open.
inline std::shared_ptr<grpc::Channel> LocalChannel(int port) {
  return *client::OpenChannel(absl::StrCat("127.0.0.1:", port), client::TlsOptions{});
}

// A context for one raw stub call: deadline now + `timeout`, the bearer token when given.
inline std::unique_ptr<grpc::ClientContext> NewClientContext(absl::Duration timeout,
                                                             std::string_view bearer_token = {}) {
  return client::CallContext()
      .set_timeout(timeout)
      .set_bearer_token(bearer_token)
      .NewClientContext();
}

// grpc.health.v1.Health/Check by hand: HealthCheckRequest{service = 1} and
// HealthCheckResponse{status = 1} are one field each. Returns the ServingStatus number
// (1 = SERVING, 2 = NOT_SERVING) or the call's error.
inline absl::StatusOr<int> CheckHealth(const std::shared_ptr<grpc::Channel>& channel,
                                       const std::string& service) {
  std::string request;
  if (!service.empty()) {
    request.push_back(0x0a);
    request.push_back(static_cast<char>(service.size()));  // names here are < 128 bytes
    request.append(service);
  }
  grpc::Slice slice(request);
  grpc::ByteBuffer request_buffer(&slice, 1);
  grpc::ByteBuffer response_buffer;
  grpc::GenericStub stub(channel);
  std::unique_ptr<grpc::ClientContext> ctx = NewClientContext(absl::Seconds(10));
  std::promise<grpc::Status> done;
  stub.UnaryCall(ctx.get(), "/grpc.health.v1.Health/Check", grpc::StubOptions(), &request_buffer,
                 &response_buffer, [&done](grpc::Status s) { done.set_value(std::move(s)); });
  grpc::Status status = done.get_future().get();
  if (!status.ok()) {
    return FromGrpcStatus(status);
  }
  std::vector<grpc::Slice> slices;
  if (!response_buffer.Dump(&slices).ok()) {
    return absl::InternalError("unreadable health response");
  }
  std::string response;
  for (const grpc::Slice& s : slices) {
    response.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  if (response.empty()) {
    return 0;  // UNKNOWN is the default value, sent as nothing
  }
  if (response.size() != 2 || response[0] != 0x08) {
    return absl::InternalError("unexpected health response");
  }
  return static_cast<int>(response[1]);
}

}  // namespace gpuaas::rpc::test
