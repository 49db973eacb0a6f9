// The rules a GPU spec must follow before the stock service stores it, and what it asks of a
// node in the placement engine's units. Plain C++ without a database, so every rule is
// unit-tested (spec_rules_test.cc). Errors are INVALID_ARGUMENT naming the field
// ("spec.gpu_type: unknown GPU model ..."), ready to pass to the client.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "gpuaas/stock/v1/stock.pb.h"
#include "libs/sched/types.h"

namespace gpuaas::stock {

namespace pb = ::gpuaas::stock::v1;

// The most GPUs one spec may ask for: the largest nodes carry 8, a few 16.
inline constexpr int32_t kMaxGpusPerSpec = 16;

// A spec's ask in exact units, parsed from its quantity strings.
struct SpecDemand {
  int64_t cpu_millis = 0;
  int64_t memory_bytes = 0;
  int64_t disk_bytes = 0;
};

// A slug (libs/service/validate.h) that may hold '.': "a100.1x", "h100-80gb.8x".
absl::Status ValidateSpecName(std::string_view field, std::string_view name);

// Every field of `spec` under `field` ("spec"): the name, a known GPU model, a GPU count of 1 to
// kMaxGpusPerSpec, a share (1..999 milli) or a MIG profile of that model only with one GPU and
// never both, positive CPU, memory and disk quantities, a price >= 0 in an ISO 4217 currency,
// and display text for the description. Returns the parsed demand.
absl::StatusOr<SpecDemand> ValidateSpec(std::string_view field, const pb::Spec& spec);

// micros_per_hour >= 0 and a three-letter upper-case currency code.
absl::Status ValidatePrice(std::string_view field, const pb::Price& price);

// What one stock of a valid spec asks of the placement engine: its GPU model only.
sched::Request PlacementRequest(const pb::Spec& spec, const SpecDemand& demand);

}  // namespace gpuaas::stock
