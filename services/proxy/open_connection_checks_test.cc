#include "services/proxy/open_connection_checks.h"

#include <gtest/gtest.h>

#include "services/proxy/static_routes.h"

namespace gpuaas::proxy {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

// "Bearer <tenant>" verifies while `valid` (the token has not expired yet).
class SwitchableAuthenticator final : public authz::Authenticator {
 public:
  absl::StatusOr<authz::Principal> Authenticate(std::string_view header) override {
    if (!valid) {
      return absl::UnauthenticatedError("expired");
    }
    authz::Principal p;
    p.user_id = "usr_1";
    p.tenant_id = std::string(header.substr(7));
    p.role = ::gpuaas::common::v1::ROLE_MEMBER;
    return p;
  }
  bool valid = true;
};

// A table holding `specs` (static_routes.h), owned by the caller.
std::unique_ptr<RouteTable> Routes(const std::vector<std::string>& specs) {
  auto routes = std::make_unique<RouteTable>();
  InstallStaticRoutes(*ParseStaticRoutes(specs), *routes);
  return routes;
}

class OpenConnectionChecksTest : public ::testing::Test {
 protected:
  Decision Forwarded(std::string_view host, std::string_view authorization) {
    Decision d = Decide({.method = "GET",
                         .target = "/",
                         .host_fields = 1,
                         .host = host,
                         .authorization = authorization},
                        {.routes = *routes_,
                         .authenticator = auth_,
                         .cookies = signer_,
                         .access_domain = "gpuaas.localhost",
                         .now = kNow});
    EXPECT_EQ(d.action, Decision::Action::kForward) << d.status;
    return d;
  }

  std::unique_ptr<RouteTable> routes_ =
      Routes({"web-1-8080=ten-a@127.0.0.1:20001", "web-1-9090=ten-a@127.0.0.1:20002,public"});
  SwitchableAuthenticator auth_;
  AccessCookieSigner signer_{std::string(32, 'k')};
};

TEST_F(OpenConnectionChecksTest, HoldsWhileTheRouteAndTheTokenDo) {
  const Decision d = Forwarded("web-1-8080.gpuaas.localhost", "Bearer ten-a");
  EXPECT_TRUE(StillRoutes(d, *routes_, auth_).ok());

  // The instance stopped (its routes went), or started again elsewhere.
  EXPECT_EQ(StillRoutes(d, *Routes({}), auth_).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(StillRoutes(d, *Routes({"web-1-8080=ten-a@127.0.0.1:20009"}), auth_).code(),
            absl::StatusCode::kNotFound);
  // The token expired.
  auth_.valid = false;
  EXPECT_EQ(StillRoutes(d, *routes_, auth_).code(), absl::StatusCode::kUnauthenticated);
}

TEST_F(OpenConnectionChecksTest, APublicPortThatTurnsPrivateEndsConnectionsWithoutCredentials) {
  const Decision d = Forwarded("web-1-9090.gpuaas.localhost", "");
  EXPECT_TRUE(StillRoutes(d, *routes_, auth_).ok());
  EXPECT_EQ(StillRoutes(d, *Routes({"web-1-9090=ten-a@127.0.0.1:20002"}), auth_).code(),
            absl::StatusCode::kPermissionDenied);
}

TEST_F(OpenConnectionChecksTest, ACookieIsAskedAgainOnceItsConfirmationIsStale) {
  Decision d;
  EXPECT_EQ(UntilNextCheck(d, GrantRechecks(absl::Seconds(60)), absl::Seconds(60), kNow),
            absl::Seconds(60));
  d.cookie_grant = authz::WorkloadGrant{.instance_id = "web-1", .port = 8080, .tenant_id = "a"};
  d.cookie = "c1";
  GrantRechecks rechecks(absl::Seconds(60));
  EXPECT_EQ(UntilNextCheck(d, rechecks, absl::Seconds(60), kNow), absl::ZeroDuration());
  rechecks.Remember("c1", absl::OkStatus(), kNow - absl::Seconds(20));
  EXPECT_EQ(UntilNextCheck(d, rechecks, absl::Seconds(60), kNow), absl::Seconds(40));
  EXPECT_EQ(UntilNextCheck(d, rechecks, absl::Seconds(60), kNow + absl::Minutes(5)),
            absl::ZeroDuration());
}

}  // namespace
}  // namespace gpuaas::proxy
