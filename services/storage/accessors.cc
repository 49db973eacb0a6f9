#include "services/storage/accessors.h"

#include "absl/strings/str_cat.h"
#include "libs/authz/tenant_scope.h"
#include "libs/common/proto_time.h"
#include "libs/common/status_macros.h"
#include "libs/rpc/handler.h"
#include "libs/service/paging.h"
#include "libs/service/validate.h"
#include "services/storage/storage_rules.h"

namespace gpuaas::storage {
namespace {

constexpr std::string_view kCreateAccessor = "CreateAccessor";

absl::Status AccessorNotFound() { return absl::NotFoundError("accessor not found"); }

}  // namespace

absl::Status Accessors::CreateAccessor(const authz::Principal& p,
                                       const pb::CreateAccessorRequest& req,
                                       pb::CreateAccessorResponse& out) {
  GPUAAS_RETURN_IF_ERROR(ValidateStorageId("storage_id", req.storage_id()));
  GPUAAS_ASSIGN_OR_RETURN(const absl::Duration ttl, AccessorTtl("ttl", req.ttl()));
  GPUAAS_RETURN_IF_ERROR(service::ValidateDisplayText("description", req.description()));
  GPUAAS_RETURN_IF_ERROR(service::ValidateRequestId("request_id", req.request_id()));
  GPUAAS_ASSIGN_OR_RETURN(const std::string scope, authz::TenantScope(p));
  GPUAAS_RETURN_IF_ERROR(authz::RequirePower(p, authz::Power::kUse, "creating an accessor"));

  const std::string access_key_id = NewAccessKeyId();
  const std::string secret = NewSecretAccessKey();
  GPUAAS_ASSIGN_OR_RETURN(const std::string sealed, box_.Seal(secret, access_key_id));
  const std::string label = rpc::PrincipalLabel(p);
  const absl::Time expire_time = clock_.Now() + ttl;
  // SERIALIZABLE, as RequestLog asks: two retries racing on one request_id cannot both create.
  return pool_.RunInTransaction(
      "storage.create_accessor",
      [&](db::Tx& tx) -> absl::Status {
        std::optional<StorageRow> row = repo_.GetStorage(tx, scope, req.storage_id());
        if (!row) return StorageNotFound();
        const pb::Storage& s = row->storage;
        if (s.state() != pb::STORAGE_STATE_READY) {
          return absl::FailedPreconditionError(absl::StrCat(
              "storage ", s.storage_id(), " is ", pb::StorageState_Name(s.state()), ", not READY"));
        }
        GPUAAS_ASSIGN_OR_RETURN(
            service::CreateOutcome created,
            log_.Create(
                tx, {.method = kCreateAccessor, .caller = label, .request_id = req.request_id()},
                req, [&](db::Tx& tx) -> absl::StatusOr<std::string> {
                  pb::Accessor a;
                  a.set_access_key_id(access_key_id);
                  a.set_storage_id(s.storage_id());
                  a.set_tenant_id(s.tenant_id());
                  a.set_read_only(req.read_only());
                  a.set_description(req.description());
                  a.set_creator(p.user_id);
                  *a.mutable_expire_time() = ToProtoTime(expire_time);
                  repo_.InsertAccessor(tx, a, sealed);
                  return access_key_id;
                }));
        std::optional<pb::Accessor> stored = repo_.GetAccessor(tx, scope, created.id);
        if (!stored) return AccessorNotFound();  // created, then deleted since
        out.Clear();
        out.set_access_key_id(stored->access_key_id());
        *out.mutable_accessor() = *std::move(stored);
        // The secret is shown once, in the first answer; a retry gets the accessor alone.
        if (created.first) out.set_secret_access_key(secret);
        return absl::OkStatus();
      },
      /*serializable=*/true);
}

absl::Status Accessors::ListAccessors(const authz::Principal& p,
                                      const pb::ListAccessorsRequest& req,
                                      pb::ListAccessorsResponse& out) {
  GPUAAS_RETURN_IF_ERROR(ValidateStorageId("storage_id", req.storage_id()));
  GPUAAS_ASSIGN_OR_RETURN(service::PageRequest page,
                          service::ParsePage(req.page_size(), req.page_token()));
  GPUAAS_ASSIGN_OR_RETURN(const std::string scope, authz::TenantScope(p));
  GPUAAS_RETURN_IF_ERROR(authz::RequirePower(p, authz::Power::kRead, "listing accessors"));
  return pool_.RunInTransaction("storage.list_accessors", [&](db::Tx& tx) -> absl::Status {
    if (!repo_.GetStorage(tx, scope, req.storage_id())) return StorageNotFound();
    service::FillPage(page, repo_.ListAccessors(tx, scope, req.storage_id(), page),
                      *out.mutable_accessors(), *out.mutable_next_page_token(),
                      [](const pb::Accessor& a) { return a.access_key_id(); });
    return absl::OkStatus();
  });
}

absl::Status Accessors::DeleteAccessor(const authz::Principal& p,
                                       const pb::DeleteAccessorRequest& req,
                                       pb::DeleteAccessorResponse& out) {
  GPUAAS_RETURN_IF_ERROR(ValidateAccessKeyId("access_key_id", req.access_key_id()));
  if (!req.storage_id().empty()) {
    GPUAAS_RETURN_IF_ERROR(ValidateStorageId("storage_id", req.storage_id()));
  }
  GPUAAS_ASSIGN_OR_RETURN(const std::string scope, authz::TenantScope(p));
  GPUAAS_RETURN_IF_ERROR(authz::RequirePower(p, authz::Power::kUse, "deleting an accessor"));
  return pool_.RunInTransaction("storage.delete_accessor", [&](db::Tx& tx) -> absl::Status {
    if (!repo_.DeleteAccessor(tx, scope, req.storage_id(), req.access_key_id())) {
      return AccessorNotFound();
    }
    out.Clear();
    return absl::OkStatus();
  });
}

}  // namespace gpuaas::storage
