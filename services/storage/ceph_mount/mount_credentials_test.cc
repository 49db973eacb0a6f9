#include "services/storage/ceph_mount/mount_credentials.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gpuaas::storage::ceph_mount {
namespace {

using Json = nlohmann::json;

// Records the commands sent and answers each by its prefix.
struct FakeMgr {
  std::vector<Json> sent;
  std::function<absl::StatusOr<std::string>(const Json&)> answer = [](const Json&) {
    return std::string("AQBkey==\n");
  };
  std::vector<std::string> evicted;
  EvictSessions AsEvict() {
    return [this](std::string_view auth_id) {
      evicted.emplace_back(auth_id);
      return absl::OkStatus();
    };
  }
  MgrCommand AsCommand() {
    return [this](std::string_view json) {
      sent.push_back(Json::parse(json));
      return answer(sent.back());
    };
  }
};

TEST(MountCredentialsTest, GrantAuthorizesTheAttachmentsIdOnOneSubvolume) {
  FakeMgr mgr;
  MountCredentials creds(mgr.AsCommand(), mgr.AsEvict(), "gpuaas");
  absl::StatusOr<MountCredential> c = creds.Grant("vol-1", "abc123", /*read_only=*/false);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->client_id, "gpuaas-att-abc123");
  EXPECT_EQ(c->key, "AQBkey==");
  ASSERT_EQ(mgr.sent.size(), 1u);
  EXPECT_EQ(mgr.sent[0]["prefix"], "fs subvolume authorize");
  EXPECT_EQ(mgr.sent[0]["vol_name"], "gpuaas");
  EXPECT_EQ(mgr.sent[0]["sub_name"], "vol-1");
  EXPECT_EQ(mgr.sent[0]["auth_id"], "gpuaas-att-abc123");
  EXPECT_EQ(mgr.sent[0]["access_level"], "rw");
  EXPECT_EQ(mgr.sent[0]["tenant_id"], "gpuaas");
}

TEST(MountCredentialsTest, ReadOnlyGrantAsksForReadAccess) {
  FakeMgr mgr;
  MountCredentials creds(mgr.AsCommand(), mgr.AsEvict(), "gpuaas");
  ASSERT_TRUE(creds.Grant("vol-1", "abc", /*read_only=*/true).ok());
  EXPECT_EQ(mgr.sent.at(0)["access_level"], "r");
}

TEST(MountCredentialsTest, RefusesAttachmentIdsThatAreNotPlainSlugs) {
  FakeMgr mgr;
  MountCredentials creds(mgr.AsCommand(), mgr.AsEvict(), "gpuaas");
  for (const std::string& bad :
       std::vector<std::string>{"", "ABC", "a b", "a.b", "a/b", "a\"b", std::string(65, 'a')}) {
    EXPECT_TRUE(absl::IsInvalidArgument(creds.Grant("v", bad, false).status())) << bad;
    EXPECT_TRUE(absl::IsInvalidArgument(creds.Revoke("v", bad))) << bad;
  }
  EXPECT_TRUE(mgr.sent.empty());
}

TEST(MountCredentialsTest, AnIdWithoutAKeyIsNotHandedOut) {
  FakeMgr mgr;
  mgr.answer = [](const Json&) { return std::string(); };
  MountCredentials creds(mgr.AsCommand(), mgr.AsEvict(), "gpuaas");
  EXPECT_TRUE(absl::IsFailedPrecondition(creds.Grant("v", "abc", false).status()));
}

TEST(MountCredentialsTest, GrantPassesTheMgrsErrorOn) {
  FakeMgr mgr;
  mgr.answer = [](const Json&) -> absl::StatusOr<std::string> {
    return RadosErrorToStatus(-ENOENT, "mgr command", "subvolume 'v' does not exist");
  };
  MountCredentials creds(mgr.AsCommand(), mgr.AsEvict(), "gpuaas");
  EXPECT_TRUE(absl::IsNotFound(creds.Grant("v", "abc", false).status()));
}

TEST(MountCredentialsTest, RevokeDeauthorizesThenEvicts) {
  FakeMgr mgr;
  mgr.answer = [](const Json&) { return std::string(); };
  MountCredentials creds(mgr.AsCommand(), mgr.AsEvict(), "gpuaas");
  ASSERT_TRUE(creds.Revoke("vol-1", "abc").ok());
  ASSERT_EQ(mgr.sent.size(), 2u);
  EXPECT_EQ(mgr.sent[0]["prefix"], "fs subvolume deauthorize");
  EXPECT_EQ(mgr.sent[1]["prefix"], "fs subvolume evict");
  for (const Json& j : mgr.sent) {
    EXPECT_EQ(j["sub_name"], "vol-1");
    EXPECT_EQ(j["auth_id"], "gpuaas-att-abc");
  }
  // And every session of the id, wherever it mounted.
  EXPECT_EQ(mgr.evicted, std::vector<std::string>{"gpuaas-att-abc"});
}

TEST(MountCredentialsTest, RevokeOfWhatIsGoneIsOk) {
  FakeMgr mgr;
  mgr.answer = [](const Json&) -> absl::StatusOr<std::string> {
    return RadosErrorToStatus(-ENOENT, "mgr command", "gone");
  };
  MountCredentials creds(mgr.AsCommand(), mgr.AsEvict(), "gpuaas");
  EXPECT_TRUE(creds.Revoke("vol-1", "abc").ok());
  EXPECT_EQ(mgr.sent.size(), 2u);
}

TEST(MountCredentialsTest, RevokeReportsOtherErrorsAndDoesNotEvictBeforeCapsAreGone) {
  FakeMgr mgr;
  mgr.answer = [](const Json&) -> absl::StatusOr<std::string> {
    return RadosErrorToStatus(-ETIMEDOUT, "mgr command", "");
  };
  MountCredentials creds(mgr.AsCommand(), mgr.AsEvict(), "gpuaas");
  EXPECT_TRUE(absl::IsUnavailable(creds.Revoke("vol-1", "abc")));
  EXPECT_EQ(mgr.sent.size(), 1u);
  EXPECT_TRUE(mgr.evicted.empty());
}

}  // namespace
}  // namespace gpuaas::storage::ceph_mount
