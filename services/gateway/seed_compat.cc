#include "services/gateway/seed_compat.h"

#include <nlohmann/json.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gpuaas/instance/v1/instance.pb.h"
#include "services/gateway/request_transcoder.h"

namespace gpuaas::gateway {
namespace {

using nlohmann::json;

// "operationID" -> "operationId"; any other key as it is.
std::string ProtoJsonKey(const std::string& key) {
  if (key.size() > 2 && absl::EndsWith(key, "ID") && absl::ascii_islower(key[key.size() - 3])) {
    return key.substr(0, key.size() - 1) + "d";
  }
  return key;
}

absl::Status Refuse(const std::string& field, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("body: ", field, ": ", why));
}

// A port's corev1.Protocol as the platform's Protocol enum.
absl::Status TranslateProtocol(const std::string& field, json& value) {
  if (!value.is_string()) return absl::OkStatus();  // the transcoder names a wrong type
  const std::string protocol = value.get<std::string>();
  if (protocol == "TCP") {
    value = "PROTOCOL_HTTP";
  } else if (protocol == "UDP" || protocol == "SCTP") {
    return Refuse(field, absl::StrCat(protocol,
                                      " is not served: an instance's ports are reached over TCP "
                                      "(HTTP through the access proxy)"));
  }
  return absl::OkStatus();
}

// Deeper than any request of the seeds' (and than protobuf's JSON parser takes): a body nested
// further is refused before this walk could run out of stack.
constexpr int kMaxDepth = 32;

// Renames `node`'s keys in place, throughout; `path` names it in errors.
absl::Status Translate(json& node, const std::string& path, int depth) {
  if (depth > kMaxDepth) {
    return absl::InvalidArgumentError(
        absl::StrCat("body: nested deeper than ", kMaxDepth, " levels"));
  }
  if (node.is_array()) {
    for (size_t i = 0; i < node.size(); ++i) {
      absl::Status s = Translate(node[i], absl::StrCat(path, "[", i, "]"), depth + 1);
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }
  if (!node.is_object()) return absl::OkStatus();
  json out = json::object();
  for (auto& [key, value] : node.items()) {
    const std::string field = path.empty() ? key : absl::StrCat(path, ".", key);
    if (key == "protocol") {
      if (absl::Status s = TranslateProtocol(field, value); !s.ok()) return s;
    }
    if (absl::Status s = Translate(value, field, depth + 1); !s.ok()) return s;
    out[ProtoJsonKey(key)] = std::move(value);
  }
  node = std::move(out);
  return absl::OkStatus();
}

// The seed's names for an instance's states.
std::string SeedStateName(const std::string& state) {
  namespace pb = ::gpuaas::instance::v1;
  if (state == pb::State_Name(pb::STATE_PENDING)) return "init";
  constexpr absl::string_view kPrefix = "STATE_";
  if (!absl::StartsWith(state, kPrefix)) return state;
  return absl::AsciiStrToLower(absl::string_view(state).substr(kPrefix.size()));
}

}  // namespace

bool IsSeedRoute(const Route& route) { return !absl::StartsWith(route.path.text(), "/v1/"); }

absl::StatusOr<std::string> SeedRequestBody(absl::string_view body) {
  json parsed = json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) return std::string(body);
  parsed.erase("tenantName");
  for (const char* quantity : {"cpu", "memory"}) {
    auto it = parsed.find(quantity);
    if (it != parsed.end() && it->is_number()) *it = it->dump();
  }
  if (absl::Status s = Translate(parsed, "", 0); !s.ok()) return s;
  return parsed.dump();
}

std::string SeedAnswer(const google::protobuf::Message& response) {
  json parsed = json::parse(MessageToJson(response), nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) return MessageToJson(response);
  auto state = parsed.find("state");
  if (state != parsed.end() && state->is_string() &&
      response.GetDescriptor() == instance::v1::Instance::descriptor()) {
    *state = SeedStateName(state->get<std::string>());
  }
  return parsed.dump();
}

}  // namespace gpuaas::gateway
