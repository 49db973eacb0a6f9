#include "libs/client/access_tokens.h"

#include <algorithm>

#include "libs/common/proto_time.h"

namespace gpuaas::client {

AccessTokens::AccessTokens(const AuthClient& auth, std::string api_key, const Clock& clock)
    : auth_(auth), api_key_(std::move(api_key)), clock_(clock) {}

absl::StatusOr<std::string> AccessTokens::Get() {
  absl::MutexLock lock(&mu_);
  const absl::Time now = clock_.Now();
  if (!token_.empty() && now < refresh_at_) {
    return token_;
  }
  authpb::ExchangeApiKeyRequest req;
  req.set_secret(api_key_);
  absl::StatusOr<authpb::ExchangeApiKeyResponse> resp = auth_.ExchangeApiKey(req);
  if (!resp.ok()) {
    return resp.status();
  }
  // Refresh after four fifths of the token's life: minutes of slack for a 15-minute token,
  // and still some for a short one. The floor keeps a clock far ahead of auth's from turning
  // every call into an exchange; a token that did expire is refused and Invalidate()d.
  constexpr absl::Duration kMinReuse = absl::Seconds(5);
  const absl::Time expires = FromProtoTime(resp->expire_time());
  token_ = resp->access_token();
  refresh_at_ = now + std::max(kMinReuse, (expires - now) * 4 / 5);
  return token_;
}

bool AccessTokens::RefreshDue() const {
  absl::MutexLock lock(&mu_);
  return token_.empty() || clock_.Now() >= refresh_at_;
}

void AccessTokens::Invalidate() {
  absl::MutexLock lock(&mu_);
  token_.clear();
  refresh_at_ = absl::InfinitePast();
}

}  // namespace gpuaas::client
