// NotifyListener against a real server: notifications arrive with their channel and payload,
// and a killed connection is reopened (on_connect again) and listens again.
#include "libs/db/notify_listener.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "libs/testing/eventually.h"
#include "libs/testing/pg_test.h"
#include "libs/testing/status_matchers.h"

namespace gpuaas::db {
namespace {

using ::gpuaas::testing::Eventually;

class NotifyListenerTest : public ::gpuaas::testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_OK_AND_ASSIGN(pool_, MakePool());
    listener_ = std::make_unique<NotifyListener>(
        dsn(), std::vector<std::string>{"alpha", "beta"},
        NotifyCallbacks{.on_notify =
                            [this](std::string_view channel, std::string_view payload) {
                              absl::MutexLock lock(&mu_);
                              got_.push_back(std::string(channel) + "/" + std::string(payload));
                            },
                        .on_connect =
                            [this] {
                              absl::MutexLock lock(&mu_);
                              ++connects_;
                            }},
        NotifyOptions{.initial_backoff = absl::Milliseconds(20)});
    listener_->Start();
    ASSERT_TRUE(Eventually([&] { return listener_->connected(); }));
  }
  void TearDown() override {
    listener_.reset();
    pool_.reset();
    PgTest::TearDown();
  }

  void Notify(const std::string& channel, const std::string& payload) {
    ASSERT_OK(pool_->RunInTransaction("notify", [&](Tx& tx) {
      tx.Exec("SELECT pg_notify($1, $2)", channel, payload);
      return absl::OkStatus();
    }));
  }
  std::vector<std::string> Got() {
    absl::MutexLock lock(&mu_);
    return got_;
  }
  int Connects() {
    absl::MutexLock lock(&mu_);
    return connects_;
  }

  std::unique_ptr<Pool> pool_;
  std::unique_ptr<NotifyListener> listener_;
  absl::Mutex mu_;
  std::vector<std::string> got_;
  int connects_ = 0;
};

TEST_F(NotifyListenerTest, DeliversChannelAndPayload) {
  Notify("alpha", "one");
  Notify("gamma", "unheard");
  Notify("beta", "two");
  ASSERT_TRUE(Eventually([&] { return Got().size() >= 2; }));
  EXPECT_EQ(Got(), (std::vector<std::string>{"alpha/one", "beta/two"}));
  EXPECT_EQ(Connects(), 1);
}

TEST_F(NotifyListenerTest, ReconnectsAfterItsConnectionIsKilled) {
  ASSERT_OK(pool_->RunInTransaction("kill", [&](Tx& tx) {
    tx.Exec(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
        "WHERE datname = current_database() AND pid <> pg_backend_pid()");
    return absl::OkStatus();
  }));
  ASSERT_TRUE(Eventually([&] { return Connects() >= 2 && listener_->connected(); }));
  Notify("alpha", "after");
  ASSERT_TRUE(Eventually([&] { return !Got().empty(); }));
  EXPECT_EQ(Got().back(), "alpha/after");
}

}  // namespace
}  // namespace gpuaas::db
