// The InstanceService and ImageService methods (instance.proto): the rows the user's intent
// writes. Where an instance is (state, node, ports) is the reconciler's to write; creates,
// starts, stops and deletes only set the desired state and hand the row over (needs_work), and
// the reconciler is kicked in-process and through NOTIFY instance_work (the table's trigger).
//
// Lookups in other services (the spec in stock, the storage, the tenant's quota in auth) run
// with the caller's own token, before the transaction: no network call holds a row lock.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gpuaas/instance/v1/instance.pb.h"
#include "libs/authz/principal.h"
#include "libs/client/auth_client.h"
#include "libs/client/stock_client.h"
#include "libs/client/storage_client.h"
#include "libs/db/db.h"

namespace gpuaas::instance {

namespace pb = ::gpuaas::instance::v1;

// The caller's "authorization" header and deadline, for the lookups made on its behalf.
struct Caller {
  std::string authorization;
  absl::Time deadline = absl::InfiniteFuture();
};

struct Peers {
  client::AuthClient& auth;
  client::StockClient& stock;
  client::StorageClient& storage;
};

class Instances final {
 public:
  // `on_work` (may be empty) runs after a commit that gave the reconciler work.
  Instances(db::Pool& pool, Peers peers, std::function<void()> on_work)
      : pool_(pool), peers_(peers), on_work_(std::move(on_work)) {}

  absl::Status CreateInstance(const authz::Principal& p, const Caller& caller,
                              const pb::CreateInstanceRequest& req, pb::Instance& out);
  absl::Status GetInstance(const authz::Principal& p, const pb::GetInstanceRequest& req,
                           pb::Instance& out);
  absl::Status ListInstances(const authz::Principal& p, const pb::ListInstancesRequest& req,
                             pb::ListInstancesResponse& out);
  absl::Status StartInstance(const authz::Principal& p, const Caller& caller,
                             const pb::StartInstanceRequest& req, pb::Instance& out);
  absl::Status StopInstance(const authz::Principal& p, const pb::StopInstanceRequest& req,
                            pb::Instance& out);
  absl::Status DeleteInstance(const authz::Principal& p, const pb::DeleteInstanceRequest& req,
                              pb::Instance& out);
  absl::Status ListUsage(const authz::Principal& p, const pb::ListUsageRequest& req,
                         pb::ListUsageResponse& out);

  // Image catalog.
  absl::Status CreateImage(const authz::Principal& p, const pb::CreateImageRequest& req,
                           pb::Image& out);
  absl::Status GetImage(const authz::Principal& p, const pb::GetImageRequest& req, pb::Image& out);
  absl::Status ListImages(const authz::Principal& p, const pb::ListImagesRequest& req,
                          pb::ListImagesResponse& out);
  absl::Status DeleteImage(const authz::Principal& p, const pb::DeleteImageRequest& req,
                           pb::DeleteImageResponse& out);

 private:
  // The tenant's quota check for instance `instance_id` to run `gpus` GPUs (and, when
  // `new_instance`, to be one more instance), under the tenant's advisory lock in `tx`.
  absl::Status CheckQuota(db::Tx& tx, const std::string& tenant, const auth::v1::Quota& quota,
                          const std::string& instance_id, int gpus, bool new_instance);
  absl::StatusOr<auth::v1::Quota> ReadQuota(const std::string& tenant, const Caller& caller);
  // Sets the desired state of the caller's instance; `change` decides from the row. NOT_FOUND
  // for another tenant's, missing or deleted instances.
  absl::Status SetDesired(const authz::Principal& p, const std::string& instance_id,
                          const std::function<absl::Status(db::Tx&, const pb::Instance&)>& change,
                          pb::Instance& out);

  db::Pool& pool_;
  Peers peers_;
  std::function<void()> on_work_;
};

}  // namespace gpuaas::instance
