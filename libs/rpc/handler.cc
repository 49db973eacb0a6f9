#include "libs/rpc/handler.h"

#include <exception>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "libs/common/logging.h"
#include "libs/rpc/internal/stream_call.h"
#include "libs/rpc/status.h"

namespace gpuaas::rpc {
namespace {

constexpr std::string_view kAuthorizationKey = "authorization";
constexpr char kInternalMessage[] = "internal error";

}  // namespace

Handler::Handler(authz::Authenticator& authenticator, ThreadPool& pool, CallRegistry* calls)
    : authenticator_(authenticator),
      pool_(pool),
      calls_(calls),
      streams_(std::make_unique<internal::OpenStreams>()) {}

Handler::~Handler() = default;

grpc::ServerUnaryReactor* Handler::Run(grpc::CallbackServerContext* ctx,
                                       std::function<absl::Status(const authz::Principal&)> fn) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  // Authentication runs on the pool too: a JWKS refetch may block on the network.
  Dispatch(reactor, [this, ctx, reactor, fn = std::move(fn), header = AuthorizationHeader(*ctx)] {
    absl::Status status = Guarded(*ctx, [&]() -> absl::Status {
      absl::StatusOr<authz::Principal> principal = Authenticate(*ctx, header);
      if (!principal.ok()) {
        return principal.status();
      }
      return fn(*principal);
    });
    reactor->Finish(ToGrpcStatus(status));
  });
  return reactor;
}

grpc::ServerUnaryReactor* Handler::RunPublic(grpc::CallbackServerContext* ctx,
                                             std::function<absl::Status()> fn) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  Dispatch(reactor, [this, ctx, reactor, fn = std::move(fn)] {
    reactor->Finish(ToGrpcStatus(Guarded(*ctx, fn)));
  });
  return reactor;
}

void Handler::EndStreams(const absl::Status& status) {
  // Outside the registry's lock: ending a stream may run its OnDone, which unregisters it.
  for (const std::shared_ptr<internal::EndableStream>& stream : streams_->Close(status)) {
    stream->End(status);
  }
}

void Handler::Dispatch(grpc::ServerUnaryReactor* reactor, std::function<void()> work) {
  if (!pool_.TrySubmit(std::move(work))) {
    reactor->Finish(ToGrpcStatus(OverloadedError()));
  }
}

std::string Handler::AuthorizationHeader(const grpc::ServerContextBase& ctx) {
  const auto& metadata = ctx.client_metadata();
  auto it = metadata.find(grpc::string_ref(kAuthorizationKey.data(), kAuthorizationKey.size()));
  if (it == metadata.end()) {
    return {};
  }
  return std::string(it->second.data(), it->second.size());
}

absl::StatusOr<authz::Principal> Handler::AuthenticateBlocking(const grpc::ServerContextBase& ctx) {
  return Authenticate(ctx, AuthorizationHeader(ctx));
}

absl::StatusOr<authz::Principal> Handler::Authenticate(const grpc::ServerContextBase& ctx,
                                                       const std::string& header) {
  if (header.empty()) {
    return absl::UnauthenticatedError("missing bearer token");
  }
  absl::StatusOr<authz::Principal> principal = authenticator_.Authenticate(header);
  if (principal.ok() && calls_ != nullptr) {
    calls_->SetPrincipal(ctx, PrincipalLabel(*principal));
  }
  return principal;
}

absl::Status Handler::OverloadedError() {
  return absl::UnavailableError("server overloaded: too many calls waiting; retry with backoff");
}

absl::Status Handler::Guarded(const grpc::CallbackServerContext& ctx,
                              const std::function<absl::Status()>& body) {
  // A call whose client already gave up (deadline, cancel) is not worth a database round trip.
  if (ctx.IsCancelled()) {
    return absl::CancelledError("call cancelled");
  }
  std::string_view method = calls_ != nullptr ? calls_->Method(ctx) : std::string_view();
  try {
    return body();
  } catch (const std::exception& e) {
    Logger("rpc")->error("{}: handler threw: {}", method, e.what());
  } catch (...) {
    Logger("rpc")->error("{}: handler threw a non-std exception", method);
  }
  return absl::InternalError(kInternalMessage);
}

std::string PrincipalLabel(const authz::Principal& p) {
  if (p.tenant_id.empty()) {
    return p.user_id;
  }
  return absl::StrCat(p.user_id, "@", p.tenant_id);
}

std::string PeerAddress(const grpc::CallbackServerContext& ctx) { return PeerAddress(ctx.peer()); }

std::string PeerAddress(std::string_view peer) {
  size_t colon = peer.find(':');
  if (colon == std::string_view::npos) {
    return std::string(peer);
  }
  std::string_view scheme = peer.substr(0, colon);
  std::string rest(peer.substr(colon + 1));
  if (scheme == "unix" || scheme == "unix-abstract") {
    return rest;
  }
  // Newer gRPC percent-encodes the brackets of IPv6 literals ("%5B::1%5D:port").
  rest = absl::StrReplaceAll(rest, {{"%5B", "["}, {"%5D", "]"}, {"%3A", ":"}, {"%25", "%"}});
  if (!rest.empty() && rest.front() == '[') {
    size_t close = rest.find(']');
    return close == std::string::npos ? rest : rest.substr(1, close - 1);
  }
  size_t port = rest.rfind(':');
  return port == std::string::npos ? rest : rest.substr(0, port);
}

}  // namespace gpuaas::rpc
