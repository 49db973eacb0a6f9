#include "services/proxy/access_decision.h"

#include <gtest/gtest.h>

#include "absl/strings/str_split.h"
#include "services/proxy/static_routes.h"

namespace gpuaas::proxy {
namespace {

using ::gpuaas::common::v1::ROLE_MEMBER;
using ::gpuaas::common::v1::ROLE_VIEWER;

const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

// "Bearer <tenant>:<MEMBER|VIEWER>" verifies; anything else is forged.
class FakeAuthenticator final : public authz::Authenticator {
 public:
  absl::StatusOr<authz::Principal> Authenticate(std::string_view header) override {
    std::vector<std::string> parts =
        absl::StrSplit(absl::string_view(header.data() + 7, header.size() - 7), ':');
    if (parts.size() != 2) {
      return absl::UnauthenticatedError("forged");
    }
    authz::Principal p;
    p.user_id = "usr_1";
    p.tenant_id = parts[0];
    p.role = parts[1] == "VIEWER" ? ROLE_VIEWER : ROLE_MEMBER;
    return p;
  }
};

class AccessDecisionTest : public ::testing::Test {
 protected:
  AccessDecisionTest() {
    InstallStaticRoutes(*ParseStaticRoutes({"web-1-8080=ten-a@127.0.0.1:20001",
                                            "web-1-9090=ten-a@127.0.0.1:20002,public"}),
                        routes_);
  }

  Decision Get(std::string_view host, std::string_view authorization = "",
               std::string_view cookie = "", std::string_view target = "/") {
    return Decide({.method = "GET",
                   .target = target,
                   .host_fields = 1,
                   .host = host,
                   .authorization = authorization,
                   .cookie = cookie},
                  {.routes = routes_,
                   .authenticator = auth_,
                   .cookies = signer_,
                   .access_domain = "gpuaas.localhost",
                   .now = kNow});
  }

  std::string Cookie(const std::string& instance_id, int port, const std::string& tenant,
                     absl::Duration ttl = absl::Hours(1)) {
    return std::string(kAccessCookieName) + "=" +
           *signer_.Sign({.instance_id = instance_id, .port = port, .tenant_id = tenant},
                         kNow + ttl);
  }

  RouteTable routes_;
  FakeAuthenticator auth_;
  AccessCookieSigner signer_{std::string(32, 'k')};
};

constexpr std::string_view kWeb = "web-1-8080.gpuaas.localhost";

TEST_F(AccessDecisionTest, TheMatrix) {
  EXPECT_EQ(Get(kWeb, "Bearer ten-a:MEMBER").action, Decision::Action::kForward);
  EXPECT_EQ(Get(kWeb, "Bearer ten-a:VIEWER").status, 403u);
  EXPECT_EQ(Get(kWeb, "Bearer ten-b:MEMBER").status, 404u);
  EXPECT_EQ(Get(kWeb).status, 401u);
  EXPECT_EQ(Get(kWeb, "Bearer forged").status, 401u);
  EXPECT_EQ(Get(kWeb, "Basic dXNlcjpwdw==").status, 401u);
  EXPECT_EQ(Get("web-2-8080.gpuaas.localhost").status, 401u);
  EXPECT_EQ(Get("web-2-8080.gpuaas.localhost", "Bearer ten-a:MEMBER").status, 404u);
  EXPECT_EQ(Get("web-1-8081.gpuaas.localhost", "Bearer ten-a:MEMBER").status, 404u);
  EXPECT_EQ(Get("elsewhere.example", "Bearer ten-a:MEMBER").status, 404u);
  // The body never says which of the 404s it was.
  EXPECT_EQ(Get("web-2-8080.gpuaas.localhost", "Bearer ten-a:MEMBER").body,
            Get(kWeb, "Bearer ten-b:MEMBER").body);
}

TEST_F(AccessDecisionTest, APublicPortNeedsNothing) {
  Decision d = Get("web-1-9090.gpuaas.localhost");
  EXPECT_EQ(d.action, Decision::Action::kForward);
  EXPECT_EQ(d.route.host_port, 20002);
}

TEST_F(AccessDecisionTest, ACookieGrantsOnlyItsOwnHost) {
  EXPECT_EQ(Get(kWeb, "", Cookie("web-1", 8080, "ten-a")).action, Decision::Action::kForward);
  EXPECT_EQ(Get(kWeb, "Bearer own-scheme", Cookie("web-1", 8080, "ten-a")).action,
            Decision::Action::kForward);
  EXPECT_EQ(Get(kWeb, "", Cookie("web-1", 8081, "ten-a")).status, 401u);
  EXPECT_EQ(Get(kWeb, "", Cookie("web-1", 8080, "ten-b")).status, 404u);
  EXPECT_EQ(Get(kWeb, "", Cookie("web-1", 8080, "ten-a", -absl::Seconds(1))).status, 401u);
  EXPECT_EQ(Get(kWeb, "", std::string(kAccessCookieName) + "=forged.mac").status, 401u);
}

TEST_F(AccessDecisionTest, ACookieChangesStateOnlyFromItsOwnOrigin) {
  const std::string cookie = Cookie("web-1", 8080, "ten-a");
  auto with = [&](std::string_view method, std::string_view origin, std::string_view site,
                  bool upgrade = false, std::string_view authorization = "",
                  std::string_view c = "") {
    return Decide({.method = method,
                   .target = "/",
                   .host_fields = 1,
                   .host = kWeb,
                   .authorization = authorization,
                   .cookie = c.empty() ? std::string_view(cookie) : c,
                   .origin = origin,
                   .fetch_site = site,
                   .upgrade = upgrade},
                  {.routes = routes_,
                   .authenticator = auth_,
                   .cookies = signer_,
                   .access_domain = "gpuaas.localhost",
                   .now = kNow});
  };
  const std::string own = "http://web-1-8080.gpuaas.localhost";
  const std::string other = "http://web-2-8080.gpuaas.localhost";
  EXPECT_EQ(with("POST", own, "same-origin").action, Decision::Action::kForward);
  EXPECT_EQ(with("POST", "", "").action, Decision::Action::kForward);  // not a browser
  EXPECT_EQ(with("GET", other, "same-site", true).status, 403u);
  EXPECT_EQ(with("GET", own, "same-origin", true).action, Decision::Action::kForward);
  EXPECT_EQ(with("POST", other, "").status, 403u);
  EXPECT_EQ(with("DELETE", "null", "").status, 403u);
  EXPECT_EQ(with("PUT", "", "cross-site").status, 403u);
  EXPECT_EQ(with("PATCH", own, "same-site").status, 403u);
  // Safe methods pass from anywhere (the cookie is SameSite=Lax; a read changes nothing).
  EXPECT_EQ(with("GET", other, "cross-site").action, Decision::Action::kForward);
  // A bearer token is never sent by a browser on its own: no origin check.
  EXPECT_EQ(with("POST", other, "cross-site", false, "Bearer ten-a:MEMBER", "x=1").action,
            Decision::Action::kForward);
}

TEST_F(AccessDecisionTest, HostTricksNeverReachAnotherInstance) {
  auto with = [&](std::string_view target, int hosts) {
    return Decide({.method = "GET",
                   .target = target,
                   .host_fields = hosts,
                   .host = kWeb,
                   .authorization = "Bearer ten-a:MEMBER"},
                  {.routes = routes_,
                   .authenticator = auth_,
                   .cookies = signer_,
                   .access_domain = "gpuaas.localhost",
                   .now = kNow});
  };
  EXPECT_EQ(with("http://web-2-8080.gpuaas.localhost/", 1).status, 400u);
  EXPECT_EQ(with("web-2-8080.gpuaas.localhost:80", 1).status, 400u);
  EXPECT_EQ(with("*", 1).status, 400u);
  EXPECT_EQ(with("/", 2).status, 400u);
  EXPECT_EQ(with("/", 0).status, 400u);
  // A Host port other than the one in the name does not change the instance port.
  Decision d = Get("web-1-8080.gpuaas.localhost:9090", "Bearer ten-a:MEMBER");
  EXPECT_EQ(d.route.host_port, 20001);
}

TEST_F(AccessDecisionTest, HealthAndLinks) {
  EXPECT_EQ(Get("anything", "", "", "/.gpuaas/healthz").status, 200u);
  Decision redeem = Get(kWeb, "", "", "/.gpuaas/access?x=1&code=abc");
  EXPECT_EQ(redeem.action, Decision::Action::kRedeem);
  EXPECT_EQ(redeem.code, "abc");
  EXPECT_EQ(Get(kWeb, "", "", "/.gpuaas/access").status, 404u);
  EXPECT_EQ(Get("web-2-8080.gpuaas.localhost", "", "", "/.gpuaas/access?code=abc").status, 404u);
}

TEST(AccessDecision, UnsyncedRoutesAnswer503) {
  RouteTable routes;
  FakeAuthenticator auth;
  AccessCookieSigner signer(std::string(32, 'k'));
  DecisionContext ctx{.routes = routes,
                      .authenticator = auth,
                      .cookies = signer,
                      .access_domain = "gpuaas.localhost",
                      .now = kNow};
  EXPECT_EQ(
      Decide({.method = "GET", .target = "/.gpuaas/healthz", .host_fields = 1, .host = "x"}, ctx)
          .status,
      503u);
  EXPECT_EQ(Decide({.method = "GET", .target = "/", .host_fields = 1, .host = kWeb}, ctx).status,
            503u);
}

}  // namespace
}  // namespace gpuaas::proxy
