#include "services/stock/specs.h"

#include <google/protobuf/util/message_differencer.h>

#include "libs/common/quantity.h"
#include "libs/common/status_macros.h"
#include "libs/service/paging.h"
#include "libs/service/update_mask.h"
#include "libs/service/validate.h"
#include "services/stock/spec_rules.h"

namespace gpuaas::stock {
namespace {

absl::Status SpecNotFound() { return absl::NotFoundError("spec not found"); }

// A spec as stored: quantities in canonical form, no times, not deprecated. Two requests are the
// same spec when these agree.
pb::Spec Canonical(pb::Spec spec, const SpecDemand& demand) {
  spec.set_cpu(FormatCpuMillis(demand.cpu_millis));
  spec.set_memory(FormatBytes(demand.memory_bytes));
  spec.set_disk(FormatBytes(demand.disk_bytes));
  spec.clear_create_time();
  spec.clear_update_time();
  spec.set_deprecated(false);
  return spec;
}

}  // namespace

absl::Status SpecCatalog::CreateSpec(const authz::Principal& p, const pb::CreateSpecRequest& req,
                                     pb::Spec& out) {
  GPUAAS_RETURN_IF_ERROR(authz::RequirePlatformAdmin(p));
  GPUAAS_ASSIGN_OR_RETURN(SpecDemand demand, ValidateSpec("spec", req.spec()));
  const pb::Spec wanted = Canonical(req.spec(), demand);
  return pool_.RunInTransaction("stock.create_spec", [&](db::Tx& tx) -> absl::Status {
    if (std::optional<pb::Spec> stored = repo_.GetSpec(tx, wanted.spec_name())) {
      pb::Spec same = *stored;
      same.clear_create_time();
      same.clear_update_time();
      same.set_deprecated(false);
      if (!google::protobuf::util::MessageDifferencer::Equals(same, wanted)) {
        return absl::AlreadyExistsError("spec " + wanted.spec_name() +
                                        " already exists with other values");
      }
      out = *std::move(stored);
      return absl::OkStatus();
    }
    repo_.InsertSpec(tx, wanted, demand);
    out = *repo_.GetSpec(tx, wanted.spec_name());
    return absl::OkStatus();
  });
}

absl::Status SpecCatalog::GetSpec(const authz::Principal& p, const pb::GetSpecRequest& req,
                                  pb::Spec& out) {
  GPUAAS_RETURN_IF_ERROR(ValidateSpecName("spec_name", req.spec_name()));
  GPUAAS_RETURN_IF_ERROR(authz::RequireRole(p, common::v1::ROLE_UNSPECIFIED));
  return pool_.RunInTransaction("stock.get_spec", [&](db::Tx& tx) -> absl::Status {
    std::optional<pb::Spec> spec = repo_.GetSpec(tx, req.spec_name());
    if (!spec) return SpecNotFound();
    out = *std::move(spec);
    return absl::OkStatus();
  });
}

absl::Status SpecCatalog::ListSpecs(const authz::Principal& p, const pb::ListSpecsRequest& req,
                                    pb::ListSpecsResponse& out) {
  GPUAAS_RETURN_IF_ERROR(authz::RequireRole(p, common::v1::ROLE_UNSPECIFIED));
  GPUAAS_ASSIGN_OR_RETURN(service::PageRequest page,
                          service::ParsePage(req.page_size(), req.page_token()));
  return pool_.RunInTransaction("stock.list_specs", [&](db::Tx& tx) -> absl::Status {
    service::FillPage(page, repo_.ListSpecs(tx, req.show_deprecated(), page), *out.mutable_specs(),
                      *out.mutable_next_page_token(),
                      [](const pb::Spec& s) { return s.spec_name(); });
    return absl::OkStatus();
  });
}

absl::Status SpecCatalog::UpdateSpec(const authz::Principal& p, const pb::UpdateSpecRequest& req,
                                     pb::Spec& out) {
  GPUAAS_RETURN_IF_ERROR(ValidateSpecName("spec.spec_name", req.spec().spec_name()));
  GPUAAS_RETURN_IF_ERROR(authz::RequirePlatformAdmin(p));
  GPUAAS_ASSIGN_OR_RETURN(
      service::UpdateMask mask,
      service::UpdateMask::Parse(req.update_mask(), {"price", "description", "deprecated"}));
  if (mask.Touches("price")) {
    GPUAAS_RETURN_IF_ERROR(ValidatePrice("spec.price", req.spec().price()));
  }
  if (mask.Touches("description")) {
    GPUAAS_RETURN_IF_ERROR(
        service::ValidateDisplayText("spec.description", req.spec().description()));
  }
  return pool_.RunInTransaction("stock.update_spec", [&](db::Tx& tx) -> absl::Status {
    std::optional<pb::Spec> spec = repo_.GetSpec(tx, req.spec().spec_name());
    if (!spec) return SpecNotFound();
    mask.Apply(req.spec(), *spec);
    repo_.UpdateSpec(tx, *spec);
    out = *repo_.GetSpec(tx, spec->spec_name());
    return absl::OkStatus();
  });
}

absl::Status SpecCatalog::DeleteSpec(const authz::Principal& p, const pb::DeleteSpecRequest& req) {
  GPUAAS_RETURN_IF_ERROR(ValidateSpecName("spec_name", req.spec_name()));
  GPUAAS_RETURN_IF_ERROR(authz::RequirePlatformAdmin(p));
  // Stocks reference their spec (a foreign key, with the stocks table): deleting a spec with
  // stocks then fails FAILED_PRECONDITION through db::MapException.
  return pool_.RunInTransaction("stock.delete_spec", [&](db::Tx& tx) -> absl::Status {
    if (!repo_.DeleteSpec(tx, req.spec_name())) return SpecNotFound();
    return absl::OkStatus();
  });
}

}  // namespace gpuaas::stock
