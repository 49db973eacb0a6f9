#include "services/gateway/route_table.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "google/api/annotations.pb.h"
#include "google/api/http.pb.h"

namespace gpuaas::gateway {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::MethodDescriptor;

// The verb and path of one rule; empty when it sets none (`custom` is refused).
std::pair<std::string, std::string> VerbAndPath(const google::api::HttpRule& rule) {
  switch (rule.pattern_case()) {
    case google::api::HttpRule::kGet:
      return {"GET", rule.get()};
    case google::api::HttpRule::kPost:
      return {"POST", rule.post()};
    case google::api::HttpRule::kPut:
      return {"PUT", rule.put()};
    case google::api::HttpRule::kPatch:
      return {"PATCH", rule.patch()};
    case google::api::HttpRule::kDelete:
      return {"DELETE", rule.delete_()};
    default:
      return {};
  }
}

absl::StatusOr<Route> MakeRoute(const MethodDescriptor& method, const google::api::HttpRule& rule) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(method.full_name(), ": ", why));
  };
  auto [verb, text] = VerbAndPath(rule);
  if (verb.empty()) {
    return bad("the rule has no get, post, put, patch or delete pattern");
  }
  absl::StatusOr<PathTemplate> path = PathTemplate::Parse(text);
  if (!path.ok()) {
    return bad(path.status().message());
  }
  if (method.client_streaming()) {
    return bad("a client-streaming method cannot be served over REST");
  }
  if (method.server_streaming() && verb != "GET") {
    return bad("a server-streaming method is served as server-sent events, so it must be GET");
  }
  const Descriptor& request = *method.input_type();
  for (const std::string& var : path->Variables()) {
    const FieldDescriptor* field = FindFieldByPath(request, var);
    if (field == nullptr || field->is_repeated() ||
        field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      return bad(absl::StrCat("path variable {", var, "} names no singular scalar field of ",
                              request.full_name()));
    }
  }
  if (!rule.body().empty() && rule.body() != "*" &&
      request.FindFieldByName(rule.body()) == nullptr) {
    return bad(absl::StrCat("body \"", rule.body(), "\" names no field of ", request.full_name()));
  }
  if (!rule.response_body().empty()) {
    return bad("response_body is not supported");
  }
  return Route{
      .http_method = verb, .path = *std::move(path), .body = rule.body(), .method = &method};
}

}  // namespace

std::string Route::grpc_method() const {
  return absl::StrCat("/", method->service()->full_name(), "/", method->name());
}

const FieldDescriptor* FindFieldByPath(const Descriptor& message, absl::string_view path) {
  const Descriptor* current = &message;
  const FieldDescriptor* field = nullptr;
  for (absl::string_view name : absl::StrSplit(path, '.')) {
    if (current == nullptr) {
      return nullptr;
    }
    field = current->FindFieldByName(std::string(name));
    if (field == nullptr) {
      return nullptr;
    }
    current = field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && !field->is_repeated()
                  ? field->message_type()
                  : nullptr;
  }
  return field;
}

absl::StatusOr<RouteTable> RouteTable::FromServices(
    std::span<const google::protobuf::ServiceDescriptor* const> services) {
  RouteTable table;
  absl::flat_hash_set<std::string> seen;  // verb + shape
  for (const google::protobuf::ServiceDescriptor* service : services) {
    for (int i = 0; i < service->method_count(); ++i) {
      const MethodDescriptor& method = *service->method(i);
      if (!method.options().HasExtension(google::api::http)) {
        continue;
      }
      const google::api::HttpRule& rule = method.options().GetExtension(google::api::http);
      std::vector<const google::api::HttpRule*> rules = {&rule};
      for (const google::api::HttpRule& extra : rule.additional_bindings()) {
        rules.push_back(&extra);
      }
      for (const google::api::HttpRule* r : rules) {
        absl::StatusOr<Route> route = MakeRoute(method, *r);
        if (!route.ok()) {
          return route.status();
        }
        if (!seen.insert(absl::StrCat(route->http_method, " ", route->path.Shape())).second) {
          return absl::InvalidArgumentError(
              absl::StrCat(method.full_name(), ": ", route->http_method, " ", route->path.text(),
                           " is already served by another method"));
        }
        table.routes_.push_back(*std::move(route));
      }
    }
  }
  return table;
}

std::optional<RouteMatch> RouteTable::Find(absl::string_view http_method,
                                           absl::string_view path) const {
  std::optional<RouteMatch> best;
  std::vector<std::pair<std::string, std::string>> bindings;
  for (const Route& route : routes_) {
    if (route.http_method != http_method || !route.path.Match(path, bindings)) {
      continue;
    }
    // More literal segments win, then a verb: "/v1/instances/a:start" is StartInstance's.
    auto rank = [](const Route& r) {
      return std::pair(r.path.LiteralCount(), !r.path.verb().empty());
    };
    if (!best || rank(route) > rank(*best->route)) {
      best = RouteMatch{.route = &route, .bindings = bindings};
    }
  }
  return best;
}

bool RouteTable::HasPath(absl::string_view path) const {
  std::vector<std::pair<std::string, std::string>> bindings;
  for (const Route& route : routes_) {
    if (route.path.Match(path, bindings)) {
      return true;
    }
  }
  return false;
}

}  // namespace gpuaas::gateway
