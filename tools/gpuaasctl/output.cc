#include "tools/gpuaasctl/output.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "google/protobuf/util/json_util.h"

namespace gpuaas::ctl {
namespace {

constexpr std::string_view kColumnGap = "  ";
constexpr std::string_view kEmptyCell = "-";

std::string_view Cell(const std::string& s) { return s.empty() ? kEmptyCell : s; }

void AppendRow(const std::vector<std::string>& cells, const std::vector<size_t>& widths,
               std::string& out) {
  std::string line;
  for (size_t i = 0; i < widths.size(); ++i) {
    std::string_view c = Cell(cells[i]);
    line += c;
    if (i + 1 < widths.size()) {
      line.append(widths[i] - c.size(), ' ');
      line += kColumnGap;
    }
  }
  // The last column's padding is already absent; a short cell before it may leave none either.
  while (!line.empty() && line.back() == ' ') {
    line.pop_back();
  }
  out += line;
  out += '\n';
}

}  // namespace

absl::StatusOr<Format> ParseFormat(std::string_view name) {
  if (name == "table") {
    return Format::kTable;
  }
  if (name == "json") {
    return Format::kJson;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown output format \"", std::string(name), "\": want table or json"));
}

std::string ToJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.always_print_primitive_fields = true;
  options.always_print_enums_as_ints = false;
  // tenant_id, not tenantId: the names grpcurl prints and the .proto declares, so a script
  // moves between the two tools unchanged.
  options.preserve_proto_field_names = true;
  std::string out;
  // Serialising a well-formed in-memory message cannot fail; a failure would be a bug in the
  // message types, and printing the partial text is more useful than hiding it.
  (void)google::protobuf::util::MessageToJsonString(message, &out, options);
  if (out.empty() || out.back() != '\n') {
    out += '\n';
  }
  return out;
}

std::string FormatTimestamp(const google::protobuf::Timestamp& ts) {
  if (ts.seconds() == 0 && ts.nanos() == 0) {
    return "";
  }
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::FromUnixSeconds(ts.seconds()),
                          absl::UTCTimeZone());
}

void Table::AddRow(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  rows_.push_back(std::move(cells));
}

std::string Table::Render() const {
  std::vector<size_t> widths(headers_.size());
  for (size_t i = 0; i < headers_.size(); ++i) {
    widths[i] = Cell(headers_[i]).size();
    for (const auto& row : rows_) {
      widths[i] = std::max(widths[i], Cell(row[i]).size());
    }
  }
  std::string out;
  AppendRow(headers_, widths, out);
  for (const auto& row : rows_) {
    AppendRow(row, widths, out);
  }
  return out;
}

void Fields::Add(std::string key, std::string value) {
  fields_.emplace_back(std::move(key), std::move(value));
}

std::string Fields::Render() const {
  size_t width = 0;
  for (const auto& [k, v] : fields_) {
    width = std::max(width, k.size() + 1);
  }
  std::string out;
  for (const auto& [k, v] : fields_) {
    std::string key = k + ":";
    key.resize(width, ' ');
    absl::StrAppend(&out, key, " ", std::string(Cell(v)), "\n");
  }
  return out;
}

}  // namespace gpuaas::ctl
