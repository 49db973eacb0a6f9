// Specs.
#include "libs/common/proto_time.h"
#include "libs/common/quantity.h"
#include "services/stock/repository.h"

namespace gpuaas::stock {
namespace {

// SQL reads best as written.
// clang-format off
#define GPUAAS_SPEC_FROM                                                                  \
  "SELECT spec_name, gpu_type, gpu_num, gpu_share_milli, mig_profile, cpu_millis, "       \
  "memory_bytes, disk_bytes, price_micros_per_hour, currency, description, deprecated, "  \
  GPUAAS_SQL_MICROS("create_time") ", " GPUAAS_SQL_MICROS("update_time")                  \
  " FROM stock.specs "
// clang-format on

pb::Spec SpecFromRow(const db::Row& r) {
  pb::Spec s;
  s.set_spec_name(r.Get<std::string>(0));
  s.set_gpu_type(r.Get<std::string>(1));
  s.set_gpu_num(r.Get<int32_t>(2));
  s.set_gpu_share_milli(r.Get<int32_t>(3));
  s.set_mig_profile(r.Get<std::string>(4));
  s.set_cpu(FormatCpuMillis(r.Get<int64_t>(5)));
  s.set_memory(FormatBytes(r.Get<int64_t>(6)));
  s.set_disk(FormatBytes(r.Get<int64_t>(7)));
  s.mutable_price()->set_micros_per_hour(r.Get<int64_t>(8));
  s.mutable_price()->set_currency(r.Get<std::string>(9));
  s.set_description(r.Get<std::string>(10));
  s.set_deprecated(r.Get<bool>(11));
  *s.mutable_create_time() = ToProtoTime(r.GetTime(12));
  *s.mutable_update_time() = ToProtoTime(r.GetTime(13));
  return s;
}

}  // namespace

void Repository::InsertSpec(db::Tx& tx, const pb::Spec& s, const SpecDemand& d) {
  constexpr std::string_view kInsertSpec =
      "INSERT INTO stock.specs (spec_name, gpu_type, gpu_num, gpu_share_milli, mig_profile, "
      "cpu_millis, memory_bytes, disk_bytes, price_micros_per_hour, currency, description) "
      "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)";
  tx.Exec(kInsertSpec, s.spec_name(), s.gpu_type(), s.gpu_num(), s.gpu_share_milli(),
          s.mig_profile(), d.cpu_millis, d.memory_bytes, d.disk_bytes, s.price().micros_per_hour(),
          s.price().currency(), s.description());
}

std::optional<pb::Spec> Repository::GetSpec(db::Tx& tx, const std::string& spec_name) {
  constexpr std::string_view kGetSpec = GPUAAS_SPEC_FROM "WHERE spec_name = $1";
  std::optional<db::Row> row = tx.Exec(kGetSpec, spec_name).First();
  if (!row) return std::nullopt;
  return SpecFromRow(*row);
}

std::vector<pb::Spec> Repository::ListSpecs(db::Tx& tx, bool show_deprecated,
                                            const service::PageRequest& page) {
  constexpr std::string_view kListSpecs = GPUAAS_SPEC_FROM
      "WHERE spec_name > $1 AND ($2 OR NOT deprecated) ORDER BY spec_name LIMIT $3";
  return tx.Exec(kListSpecs, page.after, show_deprecated, page.limit).Map(SpecFromRow);
}

bool Repository::UpdateSpec(db::Tx& tx, const pb::Spec& s) {
  constexpr std::string_view kUpdateSpec =
      "UPDATE stock.specs SET price_micros_per_hour = $2, currency = $3, description = $4, "
      "deprecated = $5, update_time = now() WHERE spec_name = $1";
  return tx.Exec(kUpdateSpec, s.spec_name(), s.price().micros_per_hour(), s.price().currency(),
                 s.description(), s.deprecated())
             .affected_rows() == 1;
}

bool Repository::DeleteSpec(db::Tx& tx, const std::string& spec_name) {
  constexpr std::string_view kDeleteSpec = "DELETE FROM stock.specs WHERE spec_name = $1";
  return tx.Exec(kDeleteSpec, spec_name).affected_rows() == 1;
}

}  // namespace gpuaas::stock
