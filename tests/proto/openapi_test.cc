// The OpenAPI document the build generates (proto/CMakeLists.txt, gpuaas_openapi) lists exactly
// the public services' REST bindings, each as an operation of its RPC, so the document the
// gateway serves cannot drift from the rules it routes by.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "nlohmann/json.hpp"
#include "tests/proto/http_bindings.h"

namespace gpuaas {
namespace {

using Route = std::pair<std::string, std::string>;  // {"GET", "/v1/instances/{instance_id}"}

nlohmann::json LoadDocument() {
  std::ifstream in(GPUAAS_OPENAPI_JSON);
  EXPECT_TRUE(in.good()) << GPUAAS_OPENAPI_JSON;
  return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
}

TEST(OpenApi, ListsEveryBindingAsAnOperationOfItsRpc) {
  const nlohmann::json doc = LoadDocument();
  ASSERT_TRUE(doc.is_object());
  EXPECT_EQ(doc.value("swagger", ""), "2.0");
  std::map<Route, const nlohmann::json*> operations;
  for (const auto& [path, methods] : doc.at("paths").items()) {
    for (const auto& [method, op] : methods.items()) {
      operations[{absl::AsciiStrToUpper(method), path}] = &op;
    }
  }
  std::set<Route> bound;
  for (const rest::Binding& b : rest::PublicBindings()) {
    const Route route{b.method, b.path};
    bound.insert(route);
    auto it = operations.find(route);
    ASSERT_NE(it, operations.end()) << b.method << " " << b.path << " is not in the document";
    // protoc-gen-swagger numbers an RPC's additional bindings: CreateInstance, CreateInstance2.
    std::string id = it->second->value("operationId", "");
    absl::string_view name(id);
    while (!name.empty() && absl::ascii_isdigit(name.back())) name.remove_suffix(1);
    EXPECT_EQ(std::string(name), b.rpc->name()) << b.method << " " << b.path;
    EXPECT_EQ(it->second->value("tags", nlohmann::json::array()),
              nlohmann::json::array({b.rpc->service()->name()}))
        << b.method << " " << b.path;
  }
  for (const auto& [route, op] : operations) {
    EXPECT_TRUE(bound.count(route)) << route.first << " " << route.second << " has no rule";
  }
  EXPECT_EQ(operations.size(), bound.size());
}

}  // namespace
}  // namespace gpuaas
