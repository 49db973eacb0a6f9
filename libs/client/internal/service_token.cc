#include "libs/client/internal/service_token.h"

#include "absl/strings/str_cat.h"

namespace gpuaas::client::internal {

absl::StatusOr<CallContext> WithServiceToken(const CallContext& call, AccessTokens* tokens) {
  if (tokens == nullptr || !call.authorization().empty()) return call;
  absl::StatusOr<std::string> token = tokens->Get();
  if (!token.ok()) {
    return absl::UnavailableError(absl::StrCat("no service token: ", token.status().ToString()));
  }
  CallContext authorized = call;
  authorized.set_bearer_token(*token);
  return authorized;
}

void NoteAnswer(const grpc::Status& status, AccessTokens* tokens) {
  if (tokens != nullptr && status.error_code() == grpc::StatusCode::UNAUTHENTICATED) {
    tokens->Invalidate();
  }
}

}  // namespace gpuaas::client::internal
