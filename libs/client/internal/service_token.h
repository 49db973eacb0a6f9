// Where a typed client's own-behalf calls get their bearer token: the service's AccessTokens
// (an agent's, the proxy's, the instance service's). The token goes on the call through
// CallContext::set_bearer_token, the one place a bearer header is written. Private to
// libs/client.
#pragma once

#include <grpcpp/support/status.h>

#include "absl/status/statusor.h"
#include "libs/client/access_tokens.h"
#include "libs/client/call_context.h"

namespace gpuaas::client::internal {

// `call` carrying the service's token: unchanged when `tokens` is null (a peer that checks
// none) or the call already carries a token (a user's). Blocks on a key exchange when the
// cached token is due. Errors: UNAVAILABLE when no token could be had (auth unreachable, or it
// refused the key: either way the peer cannot be called now).
absl::StatusOr<CallContext> WithServiceToken(const CallContext& call, AccessTokens* tokens);

// After a call's answer: a token the peer refused (UNAUTHENTICATED) is dropped, so the next
// call exchanges the key again.
void NoteAnswer(const grpc::Status& status, AccessTokens* tokens);

}  // namespace gpuaas::client::internal
