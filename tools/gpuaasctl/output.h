// How gpuaasctl prints results: `-o json` is the protobuf JSON mapping of the response with the
// proto field names (stable, for scripts and jq); `-o table` is aligned columns for people.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "google/protobuf/message.h"
#include "google/protobuf/timestamp.pb.h"

namespace gpuaas::ctl {

enum class Format { kTable, kJson };

// "table" or "json". Error: INVALID_ARGUMENT.
absl::StatusOr<Format> ParseFormat(std::string_view name);

// Pretty protobuf JSON with the proto field names (`tenant_id`, as grpcurl prints them); fields
// at their default value are printed too, so scripts never have to guess whether a missing key
// means 0, false or "". Enums print by name (`ROLE_MEMBER`).
std::string ToJson(const google::protobuf::Message& message);

// RFC 3339 in UTC, second precision; "" for an unset timestamp.
std::string FormatTimestamp(const google::protobuf::Timestamp& ts);

// Columns separated by two spaces and padded to the widest cell; empty cells print as "-" so
// every row keeps the same number of words (awk-friendly). No trailing spaces.
class Table final {
 public:
  explicit Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}

  // Rows shorter than the header are padded with empty cells, longer ones are cut.
  void AddRow(std::vector<std::string> cells);

  std::string Render() const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

// `KEY  value` lines for a single object (whoami, login), aligned like a table without header.
class Fields final {
 public:
  void Add(std::string key, std::string value);
  std::string Render() const;

 private:
  std::vector<std::pair<std::string, std::string>> fields_;
};

}  // namespace gpuaas::ctl
