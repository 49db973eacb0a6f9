#include "tools/gpuaasctl/token_store.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <map>

#include "libs/testing/temp_dir.h"

namespace gpuaas::ctl {
namespace {

using ::gpuaas::testing::TempDir;

mode_t ModeOf(const std::filesystem::path& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

StoredToken SampleToken() {
  StoredToken t;
  t.auth_addr = "127.0.0.1:17051";
  t.user_name = "alice";
  t.tenant_id = "studio-a";
  t.role = "tenant-admin";
  t.access_token = "access";
  t.refresh_token = "refresh";
  t.expire_time = absl::FromUnixSeconds(1'800'000'000);
  return t;
}

TEST(TokenStoreTest, SaveCreatesPrivateFileAndDirectory) {
  TempDir dir;
  // A permissive umask must not leak into the token file's mode.
  mode_t old = ::umask(0);
  TokenStore store(dir.path() / "cfg/gpuaas/token.json");
  absl::Status s = store.Save(SampleToken());
  ::umask(old);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(ModeOf(store.path()), 0600u);
  EXPECT_EQ(ModeOf(store.path().parent_path()), 0700u);
}

TEST(TokenStoreTest, SaveTightensAnExistingWorldReadableFile) {
  TempDir dir;
  TokenStore store(dir.path() / "token.json");
  std::ofstream(store.path()) << "{}";
  ASSERT_EQ(::chmod(store.path().c_str(), 0644), 0);
  ASSERT_TRUE(store.Save(SampleToken()).ok());
  EXPECT_EQ(ModeOf(store.path()), 0600u);
}

TEST(TokenStoreTest, RoundTrips) {
  TempDir dir;
  TokenStore store(dir.path() / "token.json");
  ASSERT_TRUE(store.Save(SampleToken()).ok());
  auto loaded = store.Load();
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_TRUE(loaded->has_value());
  const StoredToken& t = **loaded;
  EXPECT_EQ(t.auth_addr, "127.0.0.1:17051");
  EXPECT_EQ(t.user_name, "alice");
  EXPECT_EQ(t.tenant_id, "studio-a");
  EXPECT_EQ(t.role, "tenant-admin");
  EXPECT_EQ(t.access_token, "access");
  EXPECT_EQ(t.refresh_token, "refresh");
  EXPECT_EQ(t.expire_time, absl::FromUnixSeconds(1'800'000'000));
}

TEST(TokenStoreTest, InfiniteExpiryRoundTrips) {
  TempDir dir;
  TokenStore store(dir.path() / "token.json");
  StoredToken t = SampleToken();
  t.expire_time = absl::InfiniteFuture();
  ASSERT_TRUE(store.Save(t).ok());
  auto loaded = store.Load();
  ASSERT_TRUE(loaded.ok() && loaded->has_value());
  EXPECT_EQ((*loaded)->expire_time, absl::InfiniteFuture());
}

TEST(TokenStoreTest, MissingFileIsNoSession) {
  TempDir dir;
  auto loaded = TokenStore(dir.path() / "nope.json").Load();
  ASSERT_TRUE(loaded.ok());
  EXPECT_FALSE(loaded->has_value());
}

TEST(TokenStoreTest, GarbageIsDataLoss) {
  TempDir dir;
  TokenStore store(dir.path() / "token.json");
  std::ofstream(store.path()) << "not json";
  EXPECT_EQ(store.Load().status().code(), absl::StatusCode::kDataLoss);
}

TEST(TokenStoreTest, ClearRemovesAndIsIdempotent) {
  TempDir dir;
  TokenStore store(dir.path() / "token.json");
  ASSERT_TRUE(store.Save(SampleToken()).ok());
  ASSERT_TRUE(store.Clear().ok());
  EXPECT_FALSE(std::filesystem::exists(store.path()));
  EXPECT_TRUE(store.Clear().ok());
}

TEST(StoredTokenTest, ExpiredHonoursSkew) {
  StoredToken t = SampleToken();
  const absl::Time exp = t.expire_time;
  EXPECT_FALSE(t.Expired(exp - absl::Minutes(1), absl::Seconds(30)));
  EXPECT_TRUE(t.Expired(exp - absl::Seconds(10), absl::Seconds(30)));
  EXPECT_TRUE(t.Expired(exp, absl::ZeroDuration()));
}

TEST(DefaultTokenPathTest, PrefersXdgConfigHome) {
  auto p = DefaultTokenPath(client::MapEnv({{"XDG_CONFIG_HOME", "/x"}, {"HOME", "/h"}}));
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(*p, std::filesystem::path("/x/gpuaas/token.json"));
}

TEST(DefaultTokenPathTest, FallsBackToHome) {
  auto p = DefaultTokenPath(client::MapEnv({{"HOME", "/h"}}));
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(*p, std::filesystem::path("/h/.config/gpuaas/token.json"));
}

TEST(DefaultTokenPathTest, FailsWithoutHome) {
  EXPECT_EQ(DefaultTokenPath(client::MapEnv({})).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace gpuaas::ctl
