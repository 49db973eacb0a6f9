// The three answers that carry an access token (Login, Refresh, ExchangeApiKey) have one
// message each (API conventions: a response per RPC) but the same token fields.
#pragma once

#include <string>

#include "absl/time/time.h"
#include "gpuaas/common/v1/common.pb.h"
#include "libs/common/proto_time.h"

namespace gpuaas::auth {

// A signed access token and what it says.
struct IssuedToken {
  std::string token;
  absl::Time expire_time;
  std::string tenant_id;
  common::v1::Role role = common::v1::ROLE_UNSPECIFIED;
};

// Sets access_token, expire_time, token_type, tenant_id and role of any of the three answers.
template <typename Answer>
void FillTokenAnswer(const IssuedToken& t, Answer& out) {
  out.set_access_token(t.token);
  *out.mutable_expire_time() = ToProtoTime(t.expire_time);
  out.set_token_type("Bearer");
  out.set_tenant_id(t.tenant_id);
  out.set_role(t.role);
}

}  // namespace gpuaas::auth
