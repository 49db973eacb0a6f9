#include "services/storage/specs.h"

#include <google/protobuf/util/message_differencer.h>

#include "absl/strings/str_cat.h"
#include "libs/common/status_macros.h"
#include "libs/service/paging.h"
#include "libs/service/update_mask.h"
#include "libs/service/validate.h"
#include "services/storage/storage_rules.h"

namespace gpuaas::storage {
namespace {

// The fields two creates of one spec must agree on.
pb::StorageSpec Comparable(pb::StorageSpec spec) {
  spec.clear_create_time();
  spec.clear_update_time();
  return spec;
}

}  // namespace

absl::Status StorageSpecs::CreateStorageSpec(const authz::Principal& p,
                                             const pb::CreateStorageSpecRequest& req,
                                             pb::StorageSpec& out) {
  GPUAAS_ASSIGN_OR_RETURN(const pb::StorageSpec wanted, CanonicalSpec("spec", req.spec()));
  GPUAAS_RETURN_IF_ERROR(authz::RequirePlatformAdmin(p));
  GPUAAS_RETURN_IF_ERROR(backends_.Find(wanted.backend_class()).status());
  return pool_.RunInTransaction("storage.create_spec", [&](db::Tx& tx) -> absl::Status {
    if (std::optional<pb::StorageSpec> stored = repo_.GetSpec(tx, wanted.spec_name())) {
      if (!google::protobuf::util::MessageDifferencer::Equals(Comparable(*stored), wanted)) {
        return absl::AlreadyExistsError(
            absl::StrCat("storage spec ", wanted.spec_name(), " already exists with other values"));
      }
      out = *std::move(stored);
      return absl::OkStatus();
    }
    repo_.InsertSpec(tx, wanted);
    out = *repo_.GetSpec(tx, wanted.spec_name());
    return absl::OkStatus();
  });
}

absl::Status StorageSpecs::GetStorageSpec(const authz::Principal& p,
                                          const pb::GetStorageSpecRequest& req,
                                          pb::StorageSpec& out) {
  GPUAAS_RETURN_IF_ERROR(ValidateSpecName("spec_name", req.spec_name()));
  GPUAAS_RETURN_IF_ERROR(authz::RequireRole(p, common::v1::ROLE_UNSPECIFIED));
  return pool_.RunInTransaction("storage.get_spec", [&](db::Tx& tx) -> absl::Status {
    std::optional<pb::StorageSpec> spec = repo_.GetSpec(tx, req.spec_name());
    if (!spec) return SpecNotFound(req.spec_name());
    out = *std::move(spec);
    return absl::OkStatus();
  });
}

absl::Status StorageSpecs::ListStorageSpecs(const authz::Principal& p,
                                            const pb::ListStorageSpecsRequest& req,
                                            pb::ListStorageSpecsResponse& out) {
  GPUAAS_RETURN_IF_ERROR(authz::RequireRole(p, common::v1::ROLE_UNSPECIFIED));
  GPUAAS_ASSIGN_OR_RETURN(service::PageRequest page,
                          service::ParsePage(req.page_size(), req.page_token()));
  return pool_.RunInTransaction("storage.list_specs", [&](db::Tx& tx) -> absl::Status {
    service::FillPage(page, repo_.ListSpecs(tx, page), *out.mutable_specs(),
                      *out.mutable_next_page_token(),
                      [](const pb::StorageSpec& s) { return s.spec_name(); });
    return absl::OkStatus();
  });
}

absl::Status StorageSpecs::UpdateStorageSpec(const authz::Principal& p,
                                             const pb::UpdateStorageSpecRequest& req,
                                             pb::StorageSpec& out) {
  const pb::StorageSpec& in = req.spec();
  GPUAAS_RETURN_IF_ERROR(ValidateSpecName("spec.spec_name", in.spec_name()));
  GPUAAS_ASSIGN_OR_RETURN(
      service::UpdateMask mask,
      service::UpdateMask::Parse(req.update_mask(), {"price_per_gb_hour_micros", "description"}));
  if (mask.Touches("price_per_gb_hour_micros")) {
    GPUAAS_RETURN_IF_ERROR(service::ValidateNonNegative("spec.price_per_gb_hour_micros",
                                                        in.price_per_gb_hour_micros()));
  }
  if (mask.Touches("description")) {
    GPUAAS_RETURN_IF_ERROR(service::ValidateDisplayText("spec.description", in.description()));
  }
  GPUAAS_RETURN_IF_ERROR(authz::RequirePlatformAdmin(p));
  return pool_.RunInTransaction("storage.update_spec", [&](db::Tx& tx) -> absl::Status {
    std::optional<pb::StorageSpec> spec = repo_.GetSpec(tx, in.spec_name());
    if (!spec) return SpecNotFound(in.spec_name());
    mask.Apply(in, *spec);
    repo_.UpdateSpec(tx, *spec);
    out = *repo_.GetSpec(tx, spec->spec_name());
    return absl::OkStatus();
  });
}

absl::Status StorageSpecs::DeleteStorageSpec(const authz::Principal& p,
                                             const pb::DeleteStorageSpecRequest& req,
                                             pb::DeleteStorageSpecResponse& out) {
  GPUAAS_RETURN_IF_ERROR(ValidateSpecName("spec_name", req.spec_name()));
  GPUAAS_RETURN_IF_ERROR(authz::RequirePlatformAdmin(p));
  // The count names the reason; the foreign key from storages still guards a storage created
  // between the count and the delete (FAILED_PRECONDITION through db::MapException).
  return pool_.RunInTransaction("storage.delete_spec", [&](db::Tx& tx) -> absl::Status {
    if (int64_t used = repo_.CountStoragesOfSpec(tx, req.spec_name()); used > 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "storage spec ", req.spec_name(), " is used by ", used,
          used == 1 ? " storage" : " storages", ": delete them or move them to another spec"));
    }
    if (!repo_.DeleteSpec(tx, req.spec_name())) return SpecNotFound(req.spec_name());
    out.Clear();
    return absl::OkStatus();
  });
}

}  // namespace gpuaas::storage
