// The replica kill drill (issue 25) for the auth service: two gpuaas-auth processes on one
// database behind one "a,b" address and a client::AuthClient over it. Four clients call
// steadily (WhoAmI, GetTenant, ListTenants and GetJwks, which the channel's retry policy
// repeats; CreateTenant with a request id, which the typed client repeats); the first replica
// gets SIGKILL in the middle (tests/common/replica_kill_drill.h). No call may fail, and the
// survivor serves every call made after the kill. The rolling restart drill restarts each
// replica in turn with SIGTERM under the same calls and a Login now and then (sent once): no call
// may fail.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "libs/client/auth_client.h"
#include "libs/client/channel.h"
#include "libs/testing/pg_test.h"
#include "libs/testing/service_dsn.h"
#include "libs/testing/status_matchers.h"
#include "libs/testing/temp_dir.h"
#include "tests/common/replica_kill_drill.h"

namespace gpuaas::auth {
namespace {

namespace pb = ::gpuaas::auth::v1;
using gpuaas::testing::DrillResult;
using gpuaas::testing::ReplicaKillDrill;
using gpuaas::testing::ReplicaProcess;
using gpuaas::testing::RollingRestartDrill;
using gpuaas::testing::TimedCall;

constexpr std::string_view kPassword = "replica-drill-admin-password";

class AuthReplicaDrillTest : public gpuaas::testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped()) {
      return;
    }
    std::ofstream(dir_.path() / "admin-password") << kPassword << "\n";
    // The first replica bootstraps the admin, the second finds it.
    replicas_ = gpuaas::testing::StartReplicas(
        GPUAAS_AUTH_BINARY, "auth",
        {"--db-dsn=" + gpuaas::testing::ServiceDsn(dsn(), "auth"),
         "--bootstrap-admin-password-file=" + (dir_.path() / "admin-password").string()},
        dir_.path());
    ASSERT_EQ(replicas_.size(), 2u);
    ASSERT_OK_AND_ASSIGN(std::shared_ptr<grpc::Channel> channel,
                         client::OpenChannel(gpuaas::testing::AddressList(replicas_), {}));
    auth_ = std::make_unique<client::AuthClient>(channel, absl::Seconds(5));
    pb::LoginRequest login;
    login.set_user_name("admin");
    login.set_password(std::string(kPassword));
    ASSERT_OK_AND_ASSIGN(pb::LoginResponse admin, auth_->Login(login));
    call_ = client::CallContext().set_bearer_token(admin.access_token());
    pb::CreateTenantRequest seed;
    seed.mutable_tenant()->set_tenant_id("studio-a");
    ASSERT_OK(auth_->CreateTenant(seed, call_));
  }

  // A tenant admin's calls: reads the channel repeats, and a create with a request id that the
  // typed client repeats; with `once`, every fifth round a Login too, which nobody repeats (a
  // drained replica must not fail it). `prefix` keeps two drills' tenants apart.
  gpuaas::testing::DrillRound Round(const std::string& prefix, bool once = false) {
    return [this, prefix, once](int client, int round, const TimedCall& timed) {
      if (once && round % 5 == 0) {
        timed("Login", [&] {
          pb::LoginRequest login;
          login.set_user_name("admin");
          login.set_password(std::string(kPassword));
          return auth_->Login(login).status();
        });
      }
      timed("WhoAmI", [&] { return auth_->WhoAmI({}, call_).status(); });
      timed("GetTenant", [&] {
        pb::GetTenantRequest req;
        req.set_tenant_id("studio-a");
        return auth_->GetTenant(req, call_).status();
      });
      timed("ListTenants", [&] { return auth_->ListTenants({}, call_).status(); });
      timed("GetJwks", [&] { return auth_->GetJwks({}, call_).status(); });
      timed("CreateTenant", [&] {
        pb::CreateTenantRequest req;
        req.mutable_tenant()->set_tenant_id(absl::StrCat(prefix, client, "-", round));
        req.set_request_id(absl::StrCat(prefix, "create-", client, "-", round));
        return auth_->CreateTenant(req, call_).status();
      });
    };
  }

  gpuaas::testing::TempDir dir_;
  std::vector<ReplicaProcess> replicas_;
  std::unique_ptr<client::AuthClient> auth_;
  client::CallContext call_;
};

TEST_F(AuthReplicaDrillTest, KillNineOneReplicaUnderLoadFailsNoCall) {
  const DrillResult r = ReplicaKillDrill(replicas_).Run(4, Round("t-"));
  std::printf("auth replica kill drill: %s\n", r.Summary().c_str());
  gpuaas::testing::ExpectNoCallLost(r);
  EXPECT_EQ(replicas_[1].process->Terminate(), 0);
}

TEST_F(AuthReplicaDrillTest, RollingRestartUnderLoadFailsNoCall) {
  const DrillResult r = RollingRestartDrill(replicas_).Run(4, Round("r-", /*once=*/true));
  std::printf("auth rolling restart drill: %s\n", r.Summary().c_str());
  gpuaas::testing::ExpectNoCallFailedByRestarts(r);
}

}  // namespace
}  // namespace gpuaas::auth
