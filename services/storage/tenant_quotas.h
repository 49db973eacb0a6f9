// A tenant's storage quota, read from the auth service (auth.v1 Tenant.quota.max_storage_bytes)
// with the caller's own credentials: every member may read its tenant, global roles any tenant,
// so the storage service needs no credentials of its own for it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "libs/client/auth_client.h"

namespace gpuaas::storage {

class TenantQuotas final {
 public:
  // Each read takes at most `timeout`, and never longer than the caller's deadline allows.
  explicit TenantQuotas(std::shared_ptr<grpc::ChannelInterface> auth_channel,
                        absl::Duration timeout = absl::Seconds(2))
      : auth_(std::move(auth_channel), timeout) {}

  // The tenant's max_storage_bytes. Blocks on the auth service. Errors: as auth's GetTenant
  // (NOT_FOUND for an unknown tenant, UNAVAILABLE, DEADLINE_EXCEEDED), the message saying
  // the quota could not be read.
  absl::StatusOr<int64_t> MaxStorageBytes(const std::string& tenant_id,
                                          const client::CallerCredentials& caller) const;

 private:
  client::AuthClient auth_;
};

}  // namespace gpuaas::storage
