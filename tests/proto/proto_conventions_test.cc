// The API conventions of proto/README.md that a machine can check, over every .proto in proto/:
// a comment on every service, RPC and field; enum values prefixed with their enum's name; a
// request and a response message of its own for every RPC (standard methods may answer with
// the resource they create, get, update or act on). Runs protoc itself to keep the comments.
#include <google/protobuf/descriptor.pb.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"

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
  const std::string cmd =
      std::string(GPUAAS_PROTOC) + " -I" + root.string() +
      " -I/usr/include --include_source_info --descriptor_set_out=" + out.string() + " " +
      absl::StrJoin(files, " ");
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

}  // namespace
}  // namespace gpuaas
