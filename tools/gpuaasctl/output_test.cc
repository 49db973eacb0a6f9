#include "tools/gpuaasctl/output.h"

#include <gtest/gtest.h>

#include "gpuaas/auth/v1/auth.pb.h"

namespace gpuaas::ctl {
namespace {

TEST(TableTest, AlignsColumnsWithoutTrailingSpaces) {
  Table t({"TENANT", "NAME", "GPUS"});
  t.AddRow({"studio-a", "Studio A", "8"});
  t.AddRow({"b", "", "128"});
  EXPECT_EQ(t.Render(),
            "TENANT    NAME      GPUS\n"
            "studio-a  Studio A  8\n"
            "b         -         128\n");
}

TEST(TableTest, HeaderOnlyWhenEmpty) { EXPECT_EQ(Table({"A", "BB"}).Render(), "A  BB\n"); }

TEST(TableTest, ShortRowsArePaddedLongRowsCut) {
  Table t({"A", "B"});
  t.AddRow({"x"});
  t.AddRow({"1", "2", "3"});
  EXPECT_EQ(t.Render(), "A  B\nx  -\n1  2\n");
}

TEST(FieldsTest, AlignsValues) {
  Fields f;
  f.Add("user", "alice");
  f.Add("tenant", "");
  EXPECT_EQ(f.Render(), "user:   alice\ntenant: -\n");
}

TEST(ParseFormatTest, KnowsTableAndJson) {
  EXPECT_EQ(*ParseFormat("table"), Format::kTable);
  EXPECT_EQ(*ParseFormat("json"), Format::kJson);
  EXPECT_EQ(ParseFormat("yaml").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ToJsonTest, PrintsProtoFieldNamesAndDefaults) {
  auth::v1::Tenant t;
  t.set_tenant_id("studio-a");
  t.mutable_quota()->set_max_gpus(16);
  std::string json = ToJson(t);
  EXPECT_NE(json.find("\"tenant_id\": \"studio-a\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"display_name\": \"\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"max_gpus\": \"16\""), std::string::npos) << json;
  EXPECT_EQ(json.find("tenantId"), std::string::npos) << json;
  EXPECT_EQ(json.back(), '\n');
}

TEST(ToJsonTest, PrintsEnumsByName) {
  auth::v1::Membership m;
  m.set_role(common::v1::ROLE_TENANT_ADMIN);
  std::string json = ToJson(m);
  EXPECT_NE(json.find("\"role\": \"ROLE_TENANT_ADMIN\""), std::string::npos) << json;
}

TEST(FormatTimestampTest, UtcSeconds) {
  google::protobuf::Timestamp ts;
  EXPECT_EQ(FormatTimestamp(ts), "");
  ts.set_seconds(1'700'000'000);
  ts.set_nanos(5);
  EXPECT_EQ(FormatTimestamp(ts), "2023-11-14T22:13:20Z");
}

}  // namespace
}  // namespace gpuaas::ctl
