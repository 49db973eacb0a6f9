// What an outgoing call inherits from the work that makes it: a deadline, a bearer token, and,
// for a call made while serving another, that call's deadline and cancellation. Every typed
// client (auth_client.h ...) takes one per call, so no call leaves without a deadline.
//
//   // In a handler: the downstream call ends before the incoming one does, and dies with it.
//   auto call = client::CallContext::FromIncoming(*server_ctx).set_bearer_token(token);
//   GPUAAS_ASSIGN_OR_RETURN(auth::v1::Tenant tenant, auth_client.GetTenant(req, call));
//
//   // Domain code that carries the deadline as a value (no gRPC types):
//   auth_client.GetTenant(req, client::CallContext::FromDeadline(deadline));
//
//   // A call on its own behalf (CLI command, reconciler tick): the client's default timeout.
//   auth_client.GetJwks({}, client::CallContext());
#pragma once

#include <grpcpp/client_context.h>
#include <grpcpp/server_context.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/time/time.h"
#include "libs/client/cancellation.h"

namespace gpuaas::client {

// Taken off an inherited deadline, so a downstream call that runs out of time fails while we
// still have time to answer our own caller (with our error, not a bare timeout).
inline constexpr absl::Duration kDeadlineMargin = absl::Milliseconds(50);

// The timeout of a call when neither its client nor its CallContext sets one.
inline constexpr absl::Duration kDefaultTimeout = absl::Seconds(5);

// The deadline the caller of `incoming` set; InfiniteFuture when it set none.
absl::Time IncomingDeadline(const grpc::ServerContextBase& incoming);

// The deadline of a call starting at `now`: min(now + timeout, parent_deadline -
// kDeadlineMargin); an InfiniteFuture parent_deadline means there is none. A result at or
// before `now` makes the call fail at once with DEADLINE_EXCEEDED without reaching the server:
// its answer would come too late to be used.
absl::Time DeriveDeadline(absl::Time now, absl::Duration timeout, absl::Time parent_deadline);

// The credentials of the call being served, as values: what domain code needs to call other
// services on its caller's behalf (the caller's token and deadline) without gRPC types.
struct CallerCredentials {
  std::string authorization;  // the caller's `authorization` header, "Bearer <token>"; or empty
  absl::Time deadline = absl::InfiniteFuture();

  // Copied off `incoming`. Call it on the gRPC thread, where the metadata map is certainly
  // stable (rpc::RunAsCaller does). Never blocks.
  static CallerCredentials FromIncoming(const grpc::ServerContextBase& incoming);
};

// A trusted front's word on who is calling (the REST gateway's, Power::kForwardClientAddress):
// the client address a public call came from, vouched for by the front's own token. A service
// takes the address only when that token holds the power (services/auth/client_address.h);
// anyone else's claim counts for nothing.
inline constexpr std::string_view kClientAddressKey = "x-gpuaas-client-address";
inline constexpr std::string_view kForwarderKey = "x-gpuaas-forwarder";  // "Bearer <token>"

struct ForwardedClient {
  std::string address;                  // as claimed; empty when none
  std::string forwarder_authorization;  // "Bearer <the front's token>"; empty when none
  // Copied off `incoming`, on the gRPC thread (as CallerCredentials). Never blocks.
  static ForwardedClient FromIncoming(const grpc::ServerContextBase& incoming);
};

class CallContext final {
 public:
  // A call on its own behalf: deadline now + timeout.
  CallContext() = default;

  // A call made while serving `incoming` (a handler calling another service): its deadline is
  // derived from `incoming`'s (DeriveDeadline), and cancelling `incoming` (its caller went
  // away or its deadline passed) cancels it. `incoming` must outlive every call made with this
  // context, which holds when the handler waits for its downstream calls before finishing.
  static CallContext FromIncoming(const grpc::ServerContextBase& incoming);

  // A call made for work that must be done by `deadline`: the deadline is derived from it as
  // from an incoming call's (cancellation is not propagated: there is no call to follow).
  static CallContext FromDeadline(absl::Time deadline);

  // A call on `caller`'s behalf: its token, and a deadline derived from its deadline.
  static CallContext OnBehalf(const CallerCredentials& caller);

  // Sends `authorization: Bearer <token>`; a token already starting with "Bearer " is sent as
  // is, an empty one sends no header.
  CallContext& set_bearer_token(std::string_view token);

  // Vouches, with the front's own token, that the call is made for a client at `address`
  // (kClientAddressKey, kForwarderKey). Empty arguments send nothing.
  CallContext& set_forwarded_client(std::string_view forwarder_token, std::string_view address);
  // This call's timeout instead of its client's default.
  CallContext& set_timeout(absl::Duration timeout);

  // Makes the call end with CANCELLED when `cancellation` is cancelled (cancellation.h), which
  // must outlive the call.
  CallContext& set_cancellation(Cancellation& cancellation);

  // The deadline of a call starting at `now` on a client whose default timeout is
  // `default_timeout` (set_timeout wins over it).
  absl::Time Deadline(absl::Time now, absl::Duration default_timeout) const;

  // The `authorization` header value, empty when none is sent.
  const std::string& authorization() const { return authorization_; }

  // The Cancellation the call follows, or null.
  Cancellation* cancellation() const { return cancellation_; }

  // A grpc::ClientContext for one call starting now: the deadline, the bearer header and, with
  // FromIncoming, deadline and cancellation propagation from the incoming call. A context
  // serves a single call. Never blocks.
  std::unique_ptr<grpc::ClientContext> NewClientContext(
      absl::Duration default_timeout = kDefaultTimeout) const;

 private:
  const grpc::ServerContextBase* incoming_ = nullptr;  // not owned
  absl::Time parent_deadline_ = absl::InfiniteFuture();
  std::optional<absl::Duration> timeout_;
  std::string authorization_;
  std::string forwarder_authorization_;
  std::string forwarded_address_;
  Cancellation* cancellation_ = nullptr;  // not owned
};

}  // namespace gpuaas::client
