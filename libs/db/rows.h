// Query results as repositories see them: rows of typed columns, without libpqxx's types, so a
// libpqxx upgrade touches only libs/db (style rule 38).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/time/time.h"

namespace gpuaas::db {

// A bytea parameter: bind it where the column is bytea (a plain std::string binds as text).
struct Bytes {
  std::string value;
};

// One row of a Result. Columns are numbered from 0, in SELECT order. Reading a NULL column with
// Get throws (a bug: use GetOptional), which RunInTransaction reports as INTERNAL.
class Row final {
 public:
  explicit Row(pqxx::row row) : row_(std::move(row)) {}

  template <typename T>
  T Get(int column) const {
    return row_[column].as<T>();
  }

  template <typename T>
  std::optional<T> GetOptional(int column) const {
    if (row_[column].is_null()) {
      return std::nullopt;
    }
    return row_[column].as<T>();
  }

  bool IsNull(int column) const { return row_[column].is_null(); }

  // A bytea column's raw bytes.
  std::string GetBytes(int column) const;

  // A column selected as GPUAAS_SQL_MICROS(col): microseconds since the epoch.
  absl::Time GetTime(int column) const { return absl::FromUnixMicros(Get<int64_t>(column)); }
  std::optional<absl::Time> GetOptionalTime(int column) const;

  // A column holding a proto enum's number (enums are stored as integers).
  template <typename Enum>
  Enum GetEnum(int column) const {
    return static_cast<Enum>(Get<int>(column));
  }

 private:
  pqxx::row row_;
};

// The rows a statement returned, and how many rows it changed.
class Result final {
 public:
  explicit Result(pqxx::result result) : result_(std::move(result)) {}

  bool empty() const { return result_.empty(); }
  size_t size() const { return result_.size(); }
  int columns() const { return static_cast<int>(result_.columns()); }
  Row operator[](size_t i) const { return Row(result_[static_cast<pqxx::result::size_type>(i)]); }
  // The first row, or nullopt for an empty result.
  std::optional<Row> First() const;
  // Each row converted by `from_row(const Row&)`, in order.
  template <typename FromRow>
  auto Map(FromRow from_row) const -> std::vector<std::invoke_result_t<FromRow, const Row&>> {
    std::vector<std::invoke_result_t<FromRow, const Row&>> out;
    out.reserve(result_.size());
    for (size_t i = 0; i < result_.size(); ++i) {
      out.push_back(from_row((*this)[i]));
    }
    return out;
  }
  // Rows inserted, updated or deleted.
  int64_t affected_rows() const { return static_cast<int64_t>(result_.affected_rows()); }

  class Iterator final {
   public:
    Iterator(const pqxx::result& r, size_t i) : result_(&r), i_(i) {}
    Row operator*() const { return Row((*result_)[static_cast<pqxx::result::size_type>(i_)]); }
    Iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator!=(const Iterator& o) const { return i_ != o.i_; }

   private:
    const pqxx::result* result_;
    size_t i_;
  };
  Iterator begin() const { return Iterator(result_, 0); }
  Iterator end() const { return Iterator(result_, result_.size()); }

 private:
  pqxx::result result_;
};

// Selects a timestamptz column as microseconds since the epoch, for Row::GetTime. A macro so
// that statements stay compile-time string constants.
#define GPUAAS_SQL_MICROS(col) "(extract(epoch from " col ") * 1000000)::int8"

// Binds microseconds since the epoch ($n::int8) as a timestamptz.
#define GPUAAS_SQL_FROM_MICROS(param) "to_timestamp(" param "::int8 / 1000000.0)"

namespace internal {

// How each C++ argument type reaches libpqxx: enums as their numbers, Bytes as bytea, absl::Time
// as microseconds since the epoch (pair with GPUAAS_SQL_FROM_MICROS), everything else as is.
template <typename T>
decltype(auto) Bind(const T& value) {
  if constexpr (std::is_enum_v<T>) {
    return static_cast<int64_t>(value);
  } else if constexpr (std::is_same_v<T, Bytes>) {
    return pqxx::binarystring(value.value);
  } else if constexpr (std::is_same_v<T, absl::Time>) {
    return absl::ToUnixMicros(value);
  } else if constexpr (std::is_same_v<T, std::optional<absl::Time>>) {
    return value ? std::optional<int64_t>(absl::ToUnixMicros(*value)) : std::nullopt;
  } else {
    return (value);
  }
}

}  // namespace internal
}  // namespace gpuaas::db
