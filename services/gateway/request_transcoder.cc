#include "services/gateway/request_transcoder.h"

#include <google/protobuf/stubs/common.h>
#include <google/protobuf/util/json_util.h>

#include <nlohmann/json.hpp>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"

namespace gpuaas::gateway {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

// The message types a query parameter gives whole, as one string.
bool IsGivenWhole(const google::protobuf::Descriptor& type) {
  const std::string& name = type.full_name();
  return name == "google.protobuf.Timestamp" || name == "google.protobuf.Duration" ||
         name == "google.protobuf.FieldMask";
}

// A value of a path variable or query parameter as the JSON the proto's parser takes for the
// field: bools as literals, everything else as a string (the proto3 JSON mapping accepts
// numbers, enums, Timestamps, Durations and FieldMasks as strings).
absl::StatusOr<nlohmann::json> ScalarJson(const FieldDescriptor& field, absl::string_view name,
                                          const std::string& value) {
  // Percent escapes decode to any byte; JSON (and a proto's string) holds UTF-8 only.
  if (!google::protobuf::internal::IsStructurallyValidUTF8(value)) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": not UTF-8"));
  }
  if (field.cpp_type() == FieldDescriptor::CPPTYPE_BOOL) {
    if (value == "true" || value == "1") return true;
    if (value == "false" || value == "0") return false;
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": want true or false, got \"", value, "\""));
  }
  if (field.cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE &&
      !IsGivenWhole(*field.message_type())) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": a message field cannot come as a query parameter"));
  }
  return value;
}

// The field before the last of dotted `path` that is given whole (start_time of
// "start_time.seconds"), or "": its parts cannot come one by one beside it.
std::string WholeFieldAlong(const google::protobuf::Descriptor& type, absl::string_view path) {
  std::vector<absl::string_view> names = absl::StrSplit(path, '.');
  names.pop_back();
  std::string prefix;
  for (absl::string_view name : names) {
    absl::StrAppend(&prefix, prefix.empty() ? "" : ".", name);
    const FieldDescriptor* field = FindFieldByPath(type, prefix);
    if (field != nullptr && field->message_type() != nullptr &&
        IsGivenWhole(*field->message_type())) {
      return prefix;
    }
  }
  return "";
}

// Sets `value` at the dotted `path` of the JSON object `root`, or appends it to the array there.
void SetAt(nlohmann::json& root, absl::string_view path, nlohmann::json value, bool append) {
  nlohmann::json* node = &root;
  for (absl::string_view name : absl::StrSplit(path, '.')) {
    node = &(*node)[std::string(name)];
  }
  if (!append) {
    *node = std::move(value);
    return;
  }
  if (!node->is_array()) *node = nlohmann::json::array();
  node->push_back(std::move(value));
}

absl::Status ParseJsonInto(absl::string_view json, Message& message, absl::string_view where) {
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  auto status = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(json.data(), json.size()), &message, options);
  if (!status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": ", std::string(status.message())));
  }
  return absl::OkStatus();
}

bool DecodeQueryPart(absl::string_view in, std::string& out) {
  return PercentDecode(absl::StrReplaceAll(in, {{"+", " "}}), out);
}

}  // namespace

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ParseQuery(
    absl::string_view query) {
  std::vector<std::pair<std::string, std::string>> out;
  for (absl::string_view part : absl::StrSplit(query, '&', absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(part, absl::MaxSplits('=', 1));
    std::string key;
    std::string value;
    if (!DecodeQueryPart(kv.first, key) || !DecodeQueryPart(kv.second, value)) {
      return absl::InvalidArgumentError(
          absl::StrCat("query parameter ", kv.first, ": malformed percent escape"));
    }
    out.emplace_back(std::move(key), std::move(value));
  }
  return out;
}

absl::StatusOr<std::unique_ptr<Message>> TranscodeRequest(const RouteMatch& match,
                                                          absl::string_view query,
                                                          absl::string_view body) {
  const Route& route = *match.route;
  const google::protobuf::Descriptor& type = *route.method->input_type();
  std::unique_ptr<Message> request(
      google::protobuf::MessageFactory::generated_factory()->GetPrototype(&type)->New());

  // The body first: what the path says wins over it.
  const bool has_body = !route.body.empty();
  if (has_body) {
    if (route.body == "*") {
      if (absl::Status s = ParseJsonBody(body, *request); !s.ok()) return s;
    } else {
      const FieldDescriptor* field = type.FindFieldByName(route.body);
      if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && !field->is_repeated()) {
        Message* target = request->GetReflection()->MutableMessage(request.get(), field);
        if (absl::Status s = ParseJsonBody(body, *target); !s.ok()) return s;
      } else {
        const absl::string_view json = absl::StripAsciiWhitespace(body).empty() ? "{}" : body;
        nlohmann::json wrapped = nlohmann::json::object();
        nlohmann::json parsed = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
        if (parsed.is_discarded()) {
          return absl::InvalidArgumentError("body: not JSON");
        }
        wrapped[route.body] = std::move(parsed);
        if (absl::Status s = ParseJsonInto(wrapped.dump(), *request, "body"); !s.ok()) return s;
      }
    }
  } else if (!absl::StripAsciiWhitespace(body).empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(route.http_method, " ", route.path.text(), " takes no body"));
  }

  nlohmann::json bound = nlohmann::json::object();
  absl::flat_hash_set<std::string> from_path;
  for (const auto& [path, value] : match.bindings) {
    const FieldDescriptor* field = FindFieldByPath(type, path);
    absl::StatusOr<nlohmann::json> json = ScalarJson(*field, path, value);
    if (!json.ok()) return json.status();
    SetAt(bound, path, *std::move(json), /*append=*/false);
    from_path.insert(path);
  }

  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> params = ParseQuery(query);
  if (!params.ok()) return params.status();
  for (const auto& [name, value] : *params) {
    const std::string where = absl::StrCat("query parameter ", name);
    if (route.body == "*") {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": this request's fields all come in its JSON body"));
    }
    const FieldDescriptor* field = FindFieldByPath(type, name);
    if (field == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": ", type.full_name(), " has no such field"));
    }
    if (from_path.contains(name) || (has_body && absl::StartsWith(name, route.body + ".")) ||
        (has_body && name == route.body)) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": set by the path or the body"));
    }
    if (std::string whole = WholeFieldAlong(type, name); !whole.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": give ", whole, " whole (", whole, "=...), not its fields"));
    }
    absl::StatusOr<nlohmann::json> json = ScalarJson(*field, where, value);
    if (!json.ok()) return json.status();
    SetAt(bound, name, *std::move(json), field->is_repeated());
  }
  if (!bound.empty()) {
    std::unique_ptr<Message> overlay(request->New());
    if (absl::Status s = ParseJsonInto(bound.dump(), *overlay, "path or query"); !s.ok()) return s;
    request->MergeFrom(*overlay);
  }
  return request;
}

absl::Status ParseJsonBody(absl::string_view body, Message& message) {
  return ParseJsonInto(absl::StripAsciiWhitespace(body).empty() ? "{}" : body, message, "body");
}

std::string MessageToJson(const Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  std::string out;
  (void)google::protobuf::util::MessageToJsonString(message, &out, options);
  return out;
}

}  // namespace gpuaas::gateway
