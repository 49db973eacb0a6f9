// The API conventions of proto/README.md that a machine can check, over every .proto in proto/:
// a comment on every service, RPC and field; enum values prefixed with their enum's name; a
// request and a response message of its own for every RPC (standard methods may answer with
// the resource they create, get, update or act on). Runs protoc itself to keep the comments.
// The REST mapping (README "REST") is read from the compiled-in descriptors, as the gateway
// reads it.
#include <google/protobuf/descriptor.pb.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "google/api/annotations.pb.h"
#include "tests/proto/http_bindings.h"

namespace gpuaas {
namespace {

namespace fs = std::filesystem;
using google::protobuf::FileDescriptorProto;
using google::protobuf::FileDescriptorSet;

// The descriptors of every gpuaas proto, with comments (SourceCodeInfo).
FileDescriptorSet LoadProtos() {
  const fs::path root = GPUAAS_PROTO_ROOT;
  std::vector<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(root / "gpuaas")) {
    if (entry.path().extension() == ".proto") {
      files.push_back(fs::relative(entry.path(), root).string());
    }
  }
  const fs::path out = fs::path(::testing::TempDir()) / "gpuaas_protos.pb";
  const std::string cmd = std::string(GPUAAS_PROTOC) + " -I" + root.string() +
                          " -I" GPUAAS_GOOGLEAPIS_ROOT
                          " -I/usr/include --include_source_info --descriptor_set_out=" +
                          out.string() + " " + absl::StrJoin(files, " ");
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  FileDescriptorSet set;
  std::ifstream in(out, std::ios::binary);
  EXPECT_TRUE(set.ParseFromIstream(&in));
  return set;
}

// Leading comments by SourceCodeInfo path ("4,0,2,1" = message 0, field 1).
std::set<std::string> CommentedPaths(const FileDescriptorProto& file) {
  std::set<std::string> out;
  for (const auto& loc : file.source_code_info().location()) {
    if (loc.leading_comments().empty() && loc.trailing_comments().empty()) continue;
    out.insert(absl::StrJoin(loc.path(), ","));
  }
  return out;
}

bool IsTestingProto(const FileDescriptorProto& f) {
  return absl::StartsWith(f.name(), "gpuaas/testing/");
}

TEST(ProtoConventions, EveryServiceRpcAndFieldIsCommented) {
  constexpr int kMessage = 4, kField = 2, kService = 6, kMethod = 2;
  const FileDescriptorSet protos = LoadProtos();
  for (const FileDescriptorProto& f : protos.file()) {
    if (IsTestingProto(f)) continue;
    const std::set<std::string> commented = CommentedPaths(f);
    for (int s = 0; s < f.service_size(); ++s) {
      const std::string sp = absl::StrJoin({kService, s}, ",");
      EXPECT_TRUE(commented.count(sp)) << f.name() << ": service " << f.service(s).name();
      for (int m = 0; m < f.service(s).method_size(); ++m) {
        EXPECT_TRUE(commented.count(sp + "," + absl::StrJoin({kMethod, m}, ",")))
            << f.name() << ": rpc " << f.service(s).method(m).name();
      }
    }
    // Top-level messages; fields of request and response messages too.
    for (int m = 0; m < f.message_type_size(); ++m) {
      for (int i = 0; i < f.message_type(m).field_size(); ++i) {
        const std::string path = absl::StrJoin({kMessage, m, kField, i}, ",");
        EXPECT_TRUE(commented.count(path)) << f.name() << ": field " << f.message_type(m).name()
                                           << "." << f.message_type(m).field(i).name();
      }
    }
  }
}

std::string UpperSnake(const std::string& camel) {
  std::string out;
  for (size_t i = 0; i < camel.size(); ++i) {
    if (i > 0 && absl::ascii_isupper(camel[i])) out += '_';
    out += absl::ascii_toupper(camel[i]);
  }
  return out;
}

TEST(ProtoConventions, EnumValuesCarryTheirEnumsName) {
  const FileDescriptorSet protos = LoadProtos();
  for (const FileDescriptorProto& f : protos.file()) {
    auto check = [&](const google::protobuf::EnumDescriptorProto& e) {
      const std::string prefix = UpperSnake(e.name()) + "_";
      for (const auto& v : e.value()) {
        EXPECT_TRUE(absl::StartsWith(v.name(), prefix)) << f.name() << ": " << v.name();
      }
      ASSERT_GT(e.value_size(), 0);
      EXPECT_EQ(e.value(0).name(), prefix + "UNSPECIFIED") << f.name() << ": " << e.name();
    };
    for (const auto& e : f.enum_type()) check(e);
    for (const auto& m : f.message_type()) {
      for (const auto& e : m.enum_type()) check(e);
    }
  }
}

TEST(ProtoConventions, EveryRpcHasItsOwnRequestAndResponse) {
  const FileDescriptorSet protos = LoadProtos();
  for (const FileDescriptorProto& f : protos.file()) {
    if (IsTestingProto(f)) continue;
    for (const auto& s : f.service()) {
      std::set<std::string> requests;
      for (const auto& m : s.method()) {
        const std::string pkg = "." + f.package() + ".";
        EXPECT_EQ(m.input_type(), pkg + m.name() + "Request") << s.name() << "." << m.name();
        EXPECT_TRUE(requests.insert(m.input_type()).second) << m.input_type();
        // AIP-131/133/134 and custom methods acting on one resource answer with that resource;
        // every other RPC has <Method>Response.
        const bool returns_resource = !absl::EndsWith(m.output_type(), "Response");
        if (!returns_resource) {
          EXPECT_EQ(m.output_type(), pkg + m.name() + "Response") << s.name() << "." << m.name();
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// REST: the google.api.http rules.

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using rest::Binding;

std::string Where(const Binding& b) { return b.rpc->full_name() + " " + b.method + " " + b.path; }

bool IsListed(std::string_view service, auto& list) {
  return std::find(list.begin(), list.end(), service) != list.end();
}

TEST(RestConventions, EveryPublicRpcHasAnHttpRule) {
  for (std::string_view name : rest::kPublicServices) {
    const google::protobuf::ServiceDescriptor* s = rest::Service(name);
    ASSERT_NE(s, nullptr) << name;
    for (int i = 0; i < s->method_count(); ++i) {
      EXPECT_FALSE(rest::BindingsOf(*s->method(i)).empty())
          << s->method(i)->full_name() << " has no google.api.http rule";
    }
  }
}

// Machines call these with their own credentials, never through the gateway; the duplex
// services have no HTTP/JSON form.
TEST(RestConventions, MachineAndDuplexServicesHaveNoHttpRule) {
  std::vector<std::string_view> names(rest::kMachineServices.begin(), rest::kMachineServices.end());
  names.insert(names.end(), rest::kDuplexServices.begin(), rest::kDuplexServices.end());
  for (std::string_view name : names) {
    const google::protobuf::ServiceDescriptor* s = rest::Service(name);
    ASSERT_NE(s, nullptr) << name;
    for (int i = 0; i < s->method_count(); ++i) {
      EXPECT_FALSE(s->method(i)->options().HasExtension(google::api::http))
          << s->method(i)->full_name() << " is machine-only: no REST mapping";
    }
  }
}

// A new service must say which kind it is (and so whether the gateway serves it, and how).
TEST(RestConventions, EveryServiceIsPublicOrMachineOnly) {
  const FileDescriptorSet protos = LoadProtos();
  for (const FileDescriptorProto& f : protos.file()) {
    for (const auto& s : f.service()) {
      const std::string name = f.package() + "." + s.name();
      EXPECT_TRUE(IsListed(name, rest::kPublicServices) || IsListed(name, rest::kMachineServices) ||
                  IsListed(name, rest::kDuplexServices))
          << name
          << ": add it to kPublicServices, kMachineServices or kDuplexServices "
             "(tests/proto/http_bindings.h)";
    }
  }
}

// The field a dotted path ("storage.storage_id") names in `message`; nullptr when there is none.
const FieldDescriptor* FieldAt(const Descriptor& message, const std::string& path) {
  const Descriptor* m = &message;
  const FieldDescriptor* field = nullptr;
  for (const std::string& part : std::vector<std::string>(absl::StrSplit(path, '.'))) {
    if (m == nullptr) return nullptr;
    field = m->FindFieldByName(part);
    if (field == nullptr || field->is_repeated()) return nullptr;
    m = field->message_type();
  }
  return field;
}

TEST(RestConventions, PathsAreTemplatesOfRequestFields) {
  // Literals: lowerCamelCase collections (the seeds' "gpu-instances" aside); variables name a
  // singular scalar field of the request, without patterns ("{name=**}") the gateway would
  // have to support.
  const std::regex literal("[a-z][A-Za-z0-9]*|gpu-instances");
  for (const Binding& b : rest::PublicBindings()) {
    std::optional<rest::PathTemplate> t = rest::ParsePath(b.path);
    ASSERT_TRUE(t.has_value()) << Where(b);
    if (!t->verb.empty()) {
      EXPECT_TRUE(std::regex_match(t->verb, literal)) << Where(b) << ": verb";
    }
    for (const std::string& segment : t->segments) {
      std::optional<std::string> var = rest::VariableOf(segment);
      if (!var) {
        EXPECT_TRUE(std::regex_match(segment, literal)) << Where(b) << ": " << segment;
        continue;
      }
      const FieldDescriptor* field = FieldAt(*b.rpc->input_type(), *var);
      ASSERT_NE(field, nullptr) << Where(b) << ": no field " << *var << " in "
                                << b.rpc->input_type()->full_name();
      EXPECT_NE(field->cpp_type(), FieldDescriptor::CPPTYPE_MESSAGE) << Where(b) << ": " << *var;
    }
  }
}

TEST(RestConventions, BodyIsEverythingOrOneMessageField) {
  for (const Binding& b : rest::PublicBindings()) {
    if (b.method == "GET") {
      EXPECT_EQ(b.body, "") << Where(b) << ": GET has no body";
      continue;
    }
    if (b.body.empty() || b.body == "*") continue;
    const FieldDescriptor* field = b.rpc->input_type()->FindFieldByName(b.body);
    ASSERT_NE(field, nullptr) << Where(b) << ": body names no field of the request";
    EXPECT_EQ(field->cpp_type(), FieldDescriptor::CPPTYPE_MESSAGE) << Where(b);
  }
  for (std::string_view name : rest::kPublicServices) {
    const google::protobuf::ServiceDescriptor* s = rest::Service(name);
    ASSERT_NE(s, nullptr);
    for (int i = 0; i < s->method_count(); ++i) {
      const auto& rule = s->method(i)->options().GetExtension(google::api::http);
      EXPECT_EQ(rule.response_body(), "") << s->method(i)->full_name() << ": the whole answer";
    }
  }
}

// Query parameters end up in access logs, browser history and Referer headers.
TEST(RestConventions, SecretsAreNeverQueryParameters) {
  const std::set<std::string> secrets = {"password", "secret", "refresh_token",
                                         "registry_credentials"};
  for (const Binding& b : rest::PublicBindings()) {
    if (b.body == "*") continue;
    const Descriptor& request = *b.rpc->input_type();
    for (int i = 0; i < request.field_count(); ++i) {
      const std::string& name = request.field(i)->name();
      EXPECT_TRUE(name == b.body || !secrets.count(name))
          << Where(b) << ": " << name << " would travel in the URL";
    }
  }
}

TEST(RestConventions, ServerStreamsAreGetsAndClientStreamsAreNotMapped) {
  for (const Binding& b : rest::PublicBindings()) {
    EXPECT_FALSE(b.rpc->client_streaming()) << Where(b);
    if (b.rpc->server_streaming()) {
      EXPECT_EQ(b.method, "GET") << Where(b)
                                 << ": the gateway serves streams as server-sent events";
    }
  }
}

// Two bindings collide when one request could match both: same method, same verb, and at each
// segment the same literal or a variable on either side.
bool Collide(const rest::PathTemplate& a, const rest::PathTemplate& b) {
  if (a.verb != b.verb || a.segments.size() != b.segments.size()) return false;
  for (size_t i = 0; i < a.segments.size(); ++i) {
    if (rest::VariableOf(a.segments[i]) || rest::VariableOf(b.segments[i])) continue;
    if (a.segments[i] != b.segments[i]) return false;
  }
  return true;
}

TEST(RestConventions, NoTwoBindingsCollide) {
  const std::vector<Binding> bindings = rest::PublicBindings();
  for (size_t i = 0; i < bindings.size(); ++i) {
    std::optional<rest::PathTemplate> a = rest::ParsePath(bindings[i].path);
    ASSERT_TRUE(a.has_value());
    for (size_t j = i + 1; j < bindings.size(); ++j) {
      if (bindings[i].method != bindings[j].method) continue;
      std::optional<rest::PathTemplate> b = rest::ParsePath(bindings[j].path);
      ASSERT_TRUE(b.has_value());
      EXPECT_FALSE(Collide(*a, *b)) << Where(bindings[i]) << " and " << Where(bindings[j]);
    }
  }
}

// The seeds' HTTP API as written (issue 24), beside the /v1 paths; nothing else is unversioned.
struct SeedEndpoint {
  std::string method;
  std::string path;
  std::string rpc;
};
const std::vector<SeedEndpoint>& SeedEndpoints() {
  static const auto* seeds = new std::vector<SeedEndpoint>{
      {"POST", "/stocks", "gpuaas.stock.v1.StockService.CreateStocks"},
      {"DELETE", "/stocks", "gpuaas.stock.v1.StockService.DeleteStocks"},
      {"POST", "/gpu-instances", "gpuaas.instance.v1.InstanceService.CreateInstance"},
      {"GET", "/gpu-instances/{instance_id}", "gpuaas.instance.v1.InstanceService.GetInstance"},
      {"DELETE", "/gpu-instances/{instance_id}",
       "gpuaas.instance.v1.InstanceService.DeleteInstance"},
      {"POST", "/storages", "gpuaas.storage.v1.StorageService.CreateStorage"},
      {"GET", "/storages/{storage_id}", "gpuaas.storage.v1.StorageService.GetStorage"},
      {"DELETE", "/storages/{storage_id}", "gpuaas.storage.v1.StorageService.DeleteStorage"},
      {"POST", "/storages/{storage_id}/accessors",
       "gpuaas.storage.v1.StorageService.CreateAccessor"},
      {"GET", "/storages/{storage_id}/accessors", "gpuaas.storage.v1.StorageService.ListAccessors"},
      {"DELETE", "/storages/{storage_id}/accessors/{access_key_id}",
       "gpuaas.storage.v1.StorageService.DeleteAccessor"},
  };
  return *seeds;
}

TEST(RestConventions, PathsAreVersionedBesideTheSeedsEndpoints) {
  const std::vector<Binding> bindings = rest::PublicBindings();  // by_route points into it
  std::map<std::pair<std::string, std::string>, const Binding*> by_route;
  for (const Binding& b : bindings) by_route[{b.method, b.path}] = &b;
  std::set<std::pair<std::string, std::string>> seeds;
  for (const SeedEndpoint& seed : SeedEndpoints()) {
    seeds.insert({seed.method, seed.path});
    auto it = by_route.find({seed.method, seed.path});
    ASSERT_NE(it, by_route.end()) << "seed endpoint " << seed.method << " " << seed.path;
    EXPECT_EQ(it->second->rpc->full_name(), seed.rpc) << seed.method << " " << seed.path;
    EXPECT_TRUE(it->second->additional) << seed.path << ": an additional binding of the /v1 path";
  }
  for (const auto& [route, b] : by_route) {
    EXPECT_TRUE(absl::StartsWith(route.second, "/v1/") || seeds.count(route)) << Where(*b);
  }
}

}  // namespace
}  // namespace gpuaas
