// Runs callback handlers: authenticates the bearer token (unless the method is public),
// moves the work to a worker pool so blocking database calls never hold a gRPC thread,
// catches every exception, and maps the absl::Status to a grpc::Status. Unary calls here;
// bidirectional streams with RunBidi (libs/rpc/stream.h), pushed server streams with
// RunServerStream (libs/rpc/server_stream.h).
//
//   grpc::ServerUnaryReactor* GetTenant(grpc::CallbackServerContext* ctx,
//                                       const GetTenantRequest* req, Tenant* resp) override {
//     return handler_.Run(ctx, [=, this](const authz::Principal& p) {
//       return service_.GetTenant(p, *req, *resp);
//     });
//   }
//
// `req`, `resp` and `ctx` stay valid until the reactor finishes, which Handler does only after
// `fn` returned, so capturing them by pointer is safe.
#pragma once

#include <grpcpp/grpcpp.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "libs/authz/principal.h"
#include "libs/authz/verifier.h"
#include "libs/common/thread_pool.h"
#include "libs/rpc/call_registry.h"

namespace gpuaas::rpc {

template <class In, class Out>
class StreamSession;
template <class Out>
class StreamWriter;
class PushSession;

namespace internal {
class OpenStreams;
class PushSupport;
class StreamCall;
}  // namespace internal

class Handler final {
 public:
  // `calls` (optional, not owned) receives the principal of each call for the per-call log
  // line; Server passes its own.
  Handler(authz::Authenticator& authenticator, ThreadPool& pool, CallRegistry* calls = nullptr);
  ~Handler();
  Handler(const Handler&) = delete;
  Handler& operator=(const Handler&) = delete;

  // Authenticated call: UNAUTHENTICATED before `fn` runs when the token is missing or bad
  // (UNAVAILABLE when the authenticator cannot fetch keys). `fn` runs on the pool; an
  // exception from it becomes INTERNAL "internal error". When the pool's queue is full the
  // call fails UNAVAILABLE at once without running `fn`. Never blocks the calling thread.
  grpc::ServerUnaryReactor* Run(grpc::CallbackServerContext* ctx,
                                std::function<absl::Status(const authz::Principal&)> fn);

  // Public call (Login, Refresh, ExchangeApiKey, GetJwks): no token needed.
  grpc::ServerUnaryReactor* RunPublic(grpc::CallbackServerContext* ctx,
                                      std::function<absl::Status()> fn);

  // Authenticated bidirectional stream; defined in libs/rpc/stream.h, include that. As Run:
  // UNAUTHENTICATED before `open` runs when the token is missing or bad. `open` runs on the
  // pool; a non-OK status (or an exception: INTERNAL) finishes the stream with it. Then each
  // message goes to the session's OnMessage on the pool, one at a time, in order. A full pool
  // queue (at open or at a message) ends the stream UNAVAILABLE.
  template <class In, class Out>
  grpc::ServerBidiReactor<In, Out>* RunBidi(
      grpc::CallbackServerContext* ctx,
      std::function<
          absl::StatusOr<std::unique_ptr<StreamSession<In, Out>>>(const authz::Principal&)>
          open);

  // Authenticated server stream whose messages the server pushes when it has them; defined in
  // libs/rpc/server_stream.h, include that. As Run: UNAUTHENTICATED before `open` runs when the
  // token is missing or bad; `open` runs on the pool with the request and the stream's writer,
  // which the session (or whoever feeds it) keeps and Sends to; a non-OK status (or an
  // exception: INTERNAL) finishes the stream with it. Messages Sent during `open` go out once it
  // returned.
  template <class Req, class Out>
  grpc::ServerWriteReactor<Out>* RunServerStream(
      grpc::CallbackServerContext* ctx, const Req* request,
      std::function<absl::StatusOr<std::unique_ptr<PushSession>>(
          const authz::Principal&, const Req&, std::shared_ptr<StreamWriter<Out>>)>
          open);

  // For a handler of gRPC's synchronous API (a full-duplex stream that holds its thread, such
  // as a terminal session): checks the call's bearer token on the calling thread and records
  // the principal for the log line. UNAUTHENTICATED or UNAVAILABLE as Run. Blocks for at most
  // one key fetch.
  absl::StatusOr<authz::Principal> AuthenticateBlocking(const grpc::ServerContextBase& ctx);

  // Ends every open stream with `status` (an idle one at once, a busy one when its current
  // message is done) and refuses new streams with it. Server::Shutdown calls it before the
  // drain, so that streams which would stay open for hours do not hold the drain up.
  void EndStreams(const absl::Status& status);

 private:
  friend class internal::PushSupport;
  friend class internal::StreamCall;

  // Queues `work` on the pool, or finishes the call UNAVAILABLE when the queue is full.
  void Dispatch(grpc::ServerUnaryReactor* reactor, std::function<void()> work);

  // The bearer token of the call: copy it on the gRPC thread, where the metadata map is
  // certainly stable.
  static std::string AuthorizationHeader(const grpc::ServerContextBase& ctx);
  // Checks `header` and records the principal for the log line. On the pool: a JWKS refetch
  // may block on the network.
  absl::StatusOr<authz::Principal> Authenticate(const grpc::ServerContextBase& ctx,
                                                const std::string& header);
  // What a call hears when the pool's queue is full.
  static absl::Status OverloadedError();

  // Runs `body` on the calling (pool) thread, turning any exception into INTERNAL.
  absl::Status Guarded(const grpc::CallbackServerContext& ctx,
                       const std::function<absl::Status()>& body);

  authz::Authenticator& authenticator_;
  ThreadPool& pool_;
  CallRegistry* calls_;
  std::unique_ptr<internal::OpenStreams> streams_;
};

// The shape most unary RPCs have: (domain.*method)(principal, request, response) on the
// handler's pool, so a service's gRPC class is one line per method.
template <class Domain, class Req, class Resp>
grpc::ServerUnaryReactor* RunDomain(Handler& handler, grpc::CallbackServerContext* ctx,
                                    Domain& domain,
                                    absl::Status (Domain::*method)(const authz::Principal&,
                                                                   const Req&, Resp&),
                                    const Req* req, Resp* resp) {
  return handler.Run(ctx, [&domain, method, req, resp](const authz::Principal& p) {
    return (domain.*method)(p, *req, *resp);
  });
}

// As RunDomain, for methods that call other services on the caller's behalf: they also get the
// caller's credentials, `Caller::FromIncoming(*ctx)` (client::CallerCredentials), taken on the
// gRPC thread, where the metadata map is certainly stable.
template <class Domain, class Caller, class Req, class Resp>
grpc::ServerUnaryReactor* RunAsCaller(
    Handler& handler, grpc::CallbackServerContext* ctx, Domain& domain,
    absl::Status (Domain::*method)(const authz::Principal&, const Caller&, const Req&, Resp&),
    const Req* req, Resp* resp) {
  return handler.Run(
      ctx, [&domain, method, req, resp, caller = Caller::FromIncoming(*ctx)](
               const authz::Principal& p) { return (domain.*method)(p, caller, *req, *resp); });
}

// "user@tenant" (or "user" for a principal without a tenant): how logs name a caller.
std::string PrincipalLabel(const authz::Principal& p);

// The peer's host without the "ipv4:"/"ipv6:" prefix and without the port ("127.0.0.1",
// "::1"), for rate limits and logs. Unix-socket peers return the socket path.
std::string PeerAddress(const grpc::CallbackServerContext& ctx);
std::string PeerAddress(std::string_view grpc_peer);

}  // namespace gpuaas::rpc
