#include "libs/db/rows.h"

namespace gpuaas::db {

std::string Row::GetBytes(int column) const { return pqxx::binarystring(row_[column]).str(); }

std::optional<absl::Time> Row::GetOptionalTime(int column) const {
  if (IsNull(column)) {
    return std::nullopt;
  }
  return GetTime(column);
}

std::optional<Row> Result::First() const {
  if (result_.empty()) {
    return std::nullopt;
  }
  return Row(result_[0]);
}

}  // namespace gpuaas::db
