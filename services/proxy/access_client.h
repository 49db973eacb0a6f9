// The proxy's side of the instance service's AccessService (client::AccessClient, with the
// proxy's own token): a one-time link's code traded for a grant, a cookie's grant re-checked,
// and the instances reached.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "libs/authz/workload_access.h"
#include "libs/client/access_client.h"
#include "libs/client/access_tokens.h"

namespace gpuaas::proxy {

// The seam the HTTP side redeems codes through (tests may fake it).
class CodeRedeemer {
 public:
  virtual ~CodeRedeemer() = default;
  // The grant of `code` for this instance port, consuming the code. NOT_FOUND when the code
  // is unknown, used, expired or for another instance or port; UNAVAILABLE when the instance
  // service cannot be reached. Blocks on the RPC (at most `timeout`).
  virtual absl::StatusOr<authz::WorkloadGrant> Redeem(const std::string& code,
                                                      const std::string& instance_id,
                                                      int32_t port) = 0;
};

// The seam a cookie's grant is re-checked through (grant_rechecks.h; tests may fake it).
class GrantChecker {
 public:
  virtual ~GrantChecker() = default;
  // OK while `grant` still holds (AccessService.CheckAccessGrant). NOT_FOUND when its instance
  // or port is gone, PERMISSION_DENIED when its user may no longer use it, UNAVAILABLE when the
  // instance service cannot be reached. Blocks on the RPC (at most `timeout`).
  virtual absl::Status CheckGrant(const authz::WorkloadGrant& grant) = 0;
};

class AccessClient final : public CodeRedeemer, public GrantChecker {
 public:
  // `tokens` must outlive this object; `timeout` bounds each call.
  AccessClient(std::shared_ptr<grpc::Channel> instance_channel, client::AccessTokens& tokens,
               absl::Duration timeout = absl::Seconds(5));

  absl::StatusOr<authz::WorkloadGrant> Redeem(const std::string& code,
                                              const std::string& instance_id,
                                              int32_t port) override;
  absl::Status CheckGrant(const authz::WorkloadGrant& grant) override;

  // ReportAccess(instance_ids). Blocks on the RPC. Errors as the RPC's.
  absl::Status Report(const std::vector<std::string>& instance_ids);

 private:
  client::AccessClient access_;
};

}  // namespace gpuaas::proxy
