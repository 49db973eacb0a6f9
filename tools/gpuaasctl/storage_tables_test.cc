#include "tools/gpuaasctl/storage_tables.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "google/protobuf/text_format.h"

namespace gpuaas::ctl {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

template <class T>
T Parse(const std::string& text) {
  T message;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &message)) << text;
  return message;
}

std::vector<std::string> Words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

std::vector<std::string> Lines(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

TEST(StorageTablesTest, StateNamesAndHumanBytes) {
  EXPECT_EQ(StorageStateName(storagepb::STORAGE_STATE_READY), "ready");
  EXPECT_EQ(StorageStateName(storagepb::STORAGE_STATE_DELETING), "deleting");
  EXPECT_EQ(StorageStateName(storagepb::STORAGE_STATE_UNSPECIFIED), "");
  EXPECT_EQ(StorageStateName(static_cast<storagepb::StorageState>(42)), "42");
  EXPECT_EQ(*ParseStorageState("--state", "Ready"), storagepb::STORAGE_STATE_READY);
  EXPECT_EQ(*ParseStorageState("--state", "STORAGE_STATE_CREATING"),
            storagepb::STORAGE_STATE_CREATING);
  EXPECT_EQ(ParseStorageState("--state", "unspecified").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(ParseStorageState("--state", "gone").status().message()),
              HasSubstr("--state"));
  EXPECT_EQ(HumanBytes(0), "0B");
  EXPECT_EQ(HumanBytes(1023), "1023B");
  EXPECT_EQ(HumanBytes(1536), "1.5KiB");
  EXPECT_EQ(HumanBytes(int64_t{100} << 30), "100.0GiB");
}

TEST(StorageTablesTest, SpecRowsAreOneWordPerCell) {
  auto list = Parse<storagepb::ListStorageSpecsResponse>(R"pb(
    specs {
      spec_name: "ssd-100g"
      size: "100Gi"
      size_bytes: 107374182400
      max_files: 1000000
      price_per_gb_hour_micros: 50
      backend_class: "local"
      description: "fast local disk"
      create_time { seconds: 1800000000 }
    }
  )pb");
  std::vector<std::string> lines = Lines(StorageSpecTable(list.specs()));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(Words(lines[0]).front(), "SPEC");
  EXPECT_THAT(Words(lines[1]),
              ::testing::ElementsAre("ssd-100g", "100Gi", "1000000", "0.00005", "local",
                                     "2027-01-15T08:00:00Z", "fast", "local", "disk"));
}

TEST(StorageTablesTest, StorageRowsShowAttachments) {
  auto list = Parse<storagepb::ListStoragesResponse>(R"pb(
    storages {
      storage_id: "models"
      tenant_id: "alpha"
      spec_name: "ssd-100g"
      state: STORAGE_STATE_READY
      size_bytes: 107374182400
      max_files: 1000
      attachments { instance_id: "ins-1" read_only: false }
      attachments { instance_id: "ins-2" read_only: true }
      create_time { seconds: 1800000000 }
    }
  )pb");
  std::vector<std::string> lines = Lines(StorageTable(list.storages()));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_THAT(Words(lines[1]),
              ::testing::ElementsAre("models", "alpha", "ssd-100g", "ready", "100.0GiB", "1000",
                                     "ins-1,ins-2:ro", "2027-01-15T08:00:00Z", "-"));
}

TEST(StorageTablesTest, DetailShowsUsageAgainstLimits) {
  auto s = Parse<storagepb::Storage>(R"pb(
    storage_id: "models"
    state: STORAGE_STATE_READY
    size_bytes: 1073741824
    max_files: 100
    used_bytes: 536870912
    used_files: 25
    attachments { instance_id: "ins-1" node_id: "n1" }
  )pb");
  const std::string detail = StorageDetail(s);
  EXPECT_THAT(detail, HasSubstr("512.0MiB (50.0%)"));
  EXPECT_THAT(detail, HasSubstr("25 of 100 (25.0%)"));
  EXPECT_THAT(detail, HasSubstr("ins-1"));
  EXPECT_THAT(detail, HasSubstr("read-write"));
}

TEST(StorageTablesTest, AccessorSetupHasKeysAwsAndRclone) {
  auto resp = Parse<storagepb::CreateAccessorResponse>(R"pb(
    accessor { access_key_id: "GKAAAAAAAAAAAAAAAAAA" storage_id: "models" }
    access_key_id: "GKAAAAAAAAAAAAAAAAAA"
    secret_access_key: "abcdefghijklmnopqrstuvwxyz0123456789+/AB"
  )pb");
  const std::string text = AccessorSetupText(resp, "http://127.0.0.1:9000");
  EXPECT_THAT(text, HasSubstr("abcdefghijklmnopqrstuvwxyz0123456789+/AB"));
  EXPECT_THAT(text, HasSubstr("aws configure set aws_access_key_id GKAAAAAAAAAAAAAAAAAA "
                              "--profile gpuaas-models\n"));
  EXPECT_THAT(text,
              HasSubstr("aws configure set aws_secret_access_key "
                        "abcdefghijklmnopqrstuvwxyz0123456789+/AB --profile gpuaas-models\n"));
  EXPECT_THAT(text, HasSubstr("--endpoint-url http://127.0.0.1:9000 s3 ls s3://models/"));
  EXPECT_THAT(text, HasSubstr("export AWS_ACCESS_KEY_ID=GKAAAAAAAAAAAAAAAAAA\n"));
  EXPECT_THAT(text, HasSubstr("[gpuaas-models]\ntype = s3\nprovider = Other\n"));
  EXPECT_THAT(text, HasSubstr("endpoint = http://127.0.0.1:9000\n"));
  // A retry's answer has no secret: no setup lines that would hold an empty one.
  resp.clear_secret_access_key();
  const std::string retry = AccessorSetupText(resp, "http://127.0.0.1:9000");
  EXPECT_THAT(retry, HasSubstr("shown only when first created"));
  EXPECT_THAT(retry, Not(HasSubstr("aws configure")));
}

TEST(SnapshotTableTest, OneRowPerSnapshotWithHumanBytes) {
  google::protobuf::RepeatedPtrField<storagepb::Snapshot> snapshots;
  *snapshots.Add() = Parse<storagepb::Snapshot>(
      R"pb(storage_id: "data"
           snapshot_id: "before-run"
           used_bytes: 1048576
           create_time { seconds: 1767225600 })pb");
  const std::vector<std::string> lines = Lines(SnapshotTable(snapshots));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(Words(lines[0]), (std::vector<std::string>{"SNAPSHOT", "STORAGE", "USED", "CREATED"}));
  const std::vector<std::string> row = Words(lines[1]);
  ASSERT_EQ(row.size(), 4u);
  EXPECT_EQ(row[0], "before-run");
  EXPECT_EQ(row[1], "data");
  EXPECT_EQ(row[2], "1.0MiB");
}

TEST(ParseSnapshotRefTest, TakesStorageSlashSnapshotAndNamesTheFlagOtherwise) {
  absl::StatusOr<storagepb::SnapshotRef> ref = ParseSnapshotRef("--from-snapshot", "data/first");
  ASSERT_TRUE(ref.ok()) << ref.status();
  EXPECT_EQ(ref->storage_id(), "data");
  EXPECT_EQ(ref->snapshot_id(), "first");
  for (const char* bad : {"", "data", "/first", "data/", "a/b/c"}) {
    absl::StatusOr<storagepb::SnapshotRef> parsed = ParseSnapshotRef("--from-snapshot", bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(parsed.status().message()), HasSubstr("--from-snapshot")) << bad;
  }
}

}  // namespace
}  // namespace gpuaas::ctl
