#include "services/stock/spec_rules.h"

#include <algorithm>
#include <string>

#include "libs/common/quantity.h"
#include "libs/common/status_macros.h"
#include "libs/gpu/gpu_models.h"
#include "libs/sched/mig.h"
#include "libs/service/validate.h"

namespace gpuaas::stock {
namespace {

using service::InvalidField;

std::string Join(std::string_view field, std::string_view name) {
  return std::string(field) + "." + std::string(name);
}

std::string KnownModels() {
  std::string out;
  for (const gpu::GpuModel& m : gpu::KnownGpuModels()) {
    out += out.empty() ? "" : ", ";
    out += m.name;
  }
  return out;
}

// gpu_num, gpu_share_milli and mig_profile together, against `model`.
absl::Status ValidateGpuAsk(std::string_view field, const pb::Spec& spec,
                            const gpu::GpuModel& model) {
  if (spec.gpu_num() < 1 || spec.gpu_num() > kMaxGpusPerSpec) {
    return InvalidField(Join(field, "gpu_num"), "must be 1 to 16");
  }
  const bool share = spec.gpu_share_milli() != 0;
  const bool mig = !spec.mig_profile().empty();
  if (share && (spec.gpu_share_milli() < 1 || spec.gpu_share_milli() > 999)) {
    return InvalidField(Join(field, "gpu_share_milli"),
                        "must be 1 to 999 (thousandths of one GPU), or 0 for whole GPUs");
  }
  if (share && mig) {
    return InvalidField(Join(field, "mig_profile"),
                        "a spec takes a share or a MIG profile, not both");
  }
  if ((share || mig) && spec.gpu_num() != 1) {
    return InvalidField(Join(field, "gpu_num"),
                        "must be 1 when the spec takes a share or a MIG profile of one GPU");
  }
  if (mig) {
    const absl::string_view name(model.name.data(), model.name.size());
    const sched::MigGeometry* geometry = sched::FindMigGeometry(name);
    if (geometry == nullptr) {
      return InvalidField(Join(field, "mig_profile"), std::string(model.name) + " has no MIG");
    }
    if (sched::FindMigProfile(*geometry, spec.mig_profile()) == nullptr) {
      return InvalidField(
          Join(field, "mig_profile"),
          "\"" + spec.mig_profile() + "\" is not a MIG profile of " + std::string(model.name));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateSpecName(std::string_view field, std::string_view name) {
  return service::ValidateSlug(field, name, ".");
}

absl::Status ValidatePrice(std::string_view field, const pb::Price& price) {
  if (price.micros_per_hour() < 0) {
    return InvalidField(Join(field, "micros_per_hour"), "must be >= 0");
  }
  const std::string& c = price.currency();
  const bool iso = c.size() == 3 &&
                   std::all_of(c.begin(), c.end(), [](char ch) { return ch >= 'A' && ch <= 'Z'; });
  if (!iso) {
    return InvalidField(Join(field, "currency"), "must be an ISO 4217 code such as \"USD\"");
  }
  return absl::OkStatus();
}

absl::StatusOr<SpecDemand> ValidateSpec(std::string_view field, const pb::Spec& spec) {
  GPUAAS_RETURN_IF_ERROR(ValidateSpecName(Join(field, "spec_name"), spec.spec_name()));
  if (spec.gpu_type().empty()) return InvalidField(Join(field, "gpu_type"), "required");
  const gpu::GpuModel* model = gpu::FindGpuModel(spec.gpu_type());
  if (model == nullptr) {
    return InvalidField(Join(field, "gpu_type"),
                        "unknown GPU model \"" + spec.gpu_type() + "\"; known: " + KnownModels());
  }
  GPUAAS_RETURN_IF_ERROR(ValidateGpuAsk(field, spec, *model));
  SpecDemand demand;
  GPUAAS_ASSIGN_OR_RETURN(demand.cpu_millis, ParseCpuMillis(Join(field, "cpu"), spec.cpu()));
  GPUAAS_ASSIGN_OR_RETURN(demand.memory_bytes, ParseBytes(Join(field, "memory"), spec.memory()));
  GPUAAS_ASSIGN_OR_RETURN(demand.disk_bytes, ParseBytes(Join(field, "disk"), spec.disk()));
  GPUAAS_RETURN_IF_ERROR(ValidatePrice(Join(field, "price"), spec.price()));
  GPUAAS_RETURN_IF_ERROR(
      service::ValidateDisplayText(Join(field, "description"), spec.description()));
  return demand;
}

sched::Request PlacementRequest(const pb::Spec& spec, const SpecDemand& demand) {
  return sched::Request{
      .cpu_milli = demand.cpu_millis,
      .memory_bytes = demand.memory_bytes,
      .disk_bytes = demand.disk_bytes,
      .gpu_count = spec.gpu_num(),
      .gpu_milli = spec.gpu_share_milli() > 0 ? spec.gpu_share_milli() : sched::kWholeGpuMilli,
      .mig_profile = spec.mig_profile(),
      .gpu_models = {spec.gpu_type()},
  };
}

}  // namespace gpuaas::stock
