// The replica kill drill (issue 25) for the auth service: two gpuaas-auth processes on one
// database behind one "a,b" address and a client::AuthClient over it. Four clients call
// steadily (WhoAmI, GetTenant, ListTenants and GetJwks, which the channel's retry policy
// repeats; CreateTenant with a request id, which the typed client repeats); the first replica
// gets SIGKILL in the middle (tests/common/replica_kill_drill.h). No call may fail, and the
// survivor serves every call made after the kill.
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
using gpuaas::testing::KillDrillResult;
using gpuaas::testing::ReplicaKillDrill;
using gpuaas::testing::ReplicaProcess;
using gpuaas::testing::TimedCall;

constexpr std::string_view kPassword = "replica-drill-admin-password";

class AuthReplicaKillDrillTest : public gpuaas::testing::PgTest {};

TEST_F(AuthReplicaKillDrillTest, KillNineOneReplicaUnderLoadFailsNoCall) {
  gpuaas::testing::TempDir dir;
  std::ofstream(dir.path() / "admin-password") << kPassword << "\n";
  // The first replica bootstraps the admin, the second finds it.
  std::vector<ReplicaProcess> replicas = gpuaas::testing::StartReplicas(
      GPUAAS_AUTH_BINARY, "auth",
      {"--db-dsn=" + gpuaas::testing::ServiceDsn(dsn(), "auth"),
       "--bootstrap-admin-password-file=" + (dir.path() / "admin-password").string()},
      dir.path());
  ASSERT_EQ(replicas.size(), 2u);
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<grpc::Channel> channel,
                       client::OpenChannel(gpuaas::testing::AddressList(replicas), {}));
  const client::AuthClient auth(channel, absl::Seconds(5));
  pb::LoginRequest login;
  login.set_user_name("admin");
  login.set_password(std::string(kPassword));
  ASSERT_OK_AND_ASSIGN(pb::LoginResponse admin, auth.Login(login));
  const auto call = client::CallContext().set_bearer_token(admin.access_token());
  pb::CreateTenantRequest seed;
  seed.mutable_tenant()->set_tenant_id("studio-a");
  ASSERT_OK(auth.CreateTenant(seed, call));

  const KillDrillResult r =
      ReplicaKillDrill(replicas).Run(4, [&](int client, int round, const TimedCall& timed) {
        timed("WhoAmI", [&] { return auth.WhoAmI({}, call).status(); });
        timed("GetTenant", [&] {
          pb::GetTenantRequest req;
          req.set_tenant_id("studio-a");
          return auth.GetTenant(req, call).status();
        });
        timed("ListTenants", [&] { return auth.ListTenants({}, call).status(); });
        timed("GetJwks", [&] { return auth.GetJwks({}, call).status(); });
        timed("CreateTenant", [&] {
          pb::CreateTenantRequest req;
          req.mutable_tenant()->set_tenant_id(absl::StrCat("t-", client, "-", round));
          req.set_request_id(absl::StrCat("create-", client, "-", round));
          return auth.CreateTenant(req, call).status();
        });
      });
  std::printf("auth replica kill drill: %s\n", r.Summary().c_str());
  gpuaas::testing::ExpectNoCallLost(r);
  EXPECT_EQ(replicas[1].process->Terminate(), 0);
}

}  // namespace
}  // namespace gpuaas::auth
