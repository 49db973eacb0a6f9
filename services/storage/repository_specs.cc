// Storage specs.
#include "libs/common/proto_time.h"
#include "libs/common/quantity.h"
#include "services/storage/repository.h"

namespace gpuaas::storage {
namespace {

// clang-format off
#define GPUAAS_STORAGE_SPEC_FROM                                                         \
  "SELECT spec_name, size_bytes, max_files, price_per_gb_hour_micros, backend_class, "   \
  "description, " GPUAAS_SQL_MICROS("create_time") ", " GPUAAS_SQL_MICROS("update_time") \
  " FROM storage.specs "
// clang-format on

pb::StorageSpec SpecFromRow(const db::Row& r) {
  pb::StorageSpec s;
  s.set_spec_name(r.Get<std::string>(0));
  s.set_size_bytes(r.Get<int64_t>(1));
  s.set_size(FormatBytes(s.size_bytes()));
  s.set_max_files(r.Get<int64_t>(2));
  s.set_price_per_gb_hour_micros(r.Get<int64_t>(3));
  s.set_backend_class(r.Get<std::string>(4));
  s.set_description(r.Get<std::string>(5));
  *s.mutable_create_time() = ToProtoTime(r.GetTime(6));
  *s.mutable_update_time() = ToProtoTime(r.GetTime(7));
  return s;
}

}  // namespace

void Repository::PlanForParameters(db::Tx& tx) {
  tx.ExecScript("SET LOCAL plan_cache_mode = force_custom_plan");
}

void Repository::InsertSpec(db::Tx& tx, const pb::StorageSpec& s) {
  constexpr std::string_view kInsertSpec =
      "INSERT INTO storage.specs (spec_name, size_bytes, max_files, price_per_gb_hour_micros, "
      "backend_class, description) VALUES ($1, $2, $3, $4, $5, $6)";
  tx.Exec(kInsertSpec, s.spec_name(), s.size_bytes(), s.max_files(), s.price_per_gb_hour_micros(),
          s.backend_class(), s.description());
}

std::optional<pb::StorageSpec> Repository::GetSpec(db::Tx& tx, const std::string& spec_name) {
  constexpr std::string_view kGetSpec = GPUAAS_STORAGE_SPEC_FROM "WHERE spec_name = $1";
  std::optional<db::Row> row = tx.Exec(kGetSpec, spec_name).First();
  if (!row) return std::nullopt;
  return SpecFromRow(*row);
}

std::vector<pb::StorageSpec> Repository::ListSpecs(db::Tx& tx, const service::PageRequest& page) {
  constexpr std::string_view kListSpecs =
      GPUAAS_STORAGE_SPEC_FROM "WHERE spec_name > $1 ORDER BY spec_name LIMIT $2";
  return tx.Exec(kListSpecs, page.after, page.limit).Map(SpecFromRow);
}

bool Repository::UpdateSpec(db::Tx& tx, const pb::StorageSpec& s) {
  constexpr std::string_view kUpdateSpec =
      "UPDATE storage.specs SET price_per_gb_hour_micros = $2, description = $3, "
      "update_time = now() WHERE spec_name = $1";
  return tx.Exec(kUpdateSpec, s.spec_name(), s.price_per_gb_hour_micros(), s.description())
             .affected_rows() == 1;
}

bool Repository::DeleteSpec(db::Tx& tx, const std::string& spec_name) {
  constexpr std::string_view kDeleteSpec = "DELETE FROM storage.specs WHERE spec_name = $1";
  return tx.Exec(kDeleteSpec, spec_name).affected_rows() == 1;
}

int64_t Repository::CountStoragesOfSpec(db::Tx& tx, const std::string& spec_name) {
  constexpr std::string_view kCountOfSpec =
      "SELECT count(*) FROM storage.storages WHERE spec_name = $1";
  return tx.Exec(kCountOfSpec, spec_name).First()->Get<int64_t>(0);
}

}  // namespace gpuaas::storage
