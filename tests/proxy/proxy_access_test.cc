// The access proxy on the whole platform: real tokens from the auth service, a real sandboxed
// workload (upstream.py) on an agent, routes from the instance service's watch. Who reaches
// what (the access matrix), and routes that go when the instance stops.
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "libs/authz/jwt.h"
#include "libs/testing/eventually.h"
#include "libs/testing/pg_test.h"
#include "libs/testing/temp_dir.h"
#include "tests/platform/platform_stack.h"
#include "tests/proxy/http_client.h"
#include "tests/proxy/proxy_process.h"
#include "tests/proxy/upstream_workload.h"

namespace gpuaas::proxy_testing {
namespace {

namespace instancepb = ::gpuaas::instance::v1;
using platform_testing::PlatformStack;

std::string Bearer(const std::string& token) { return "Authorization: Bearer " + token + "\r\n"; }

class ProxyAccessTest : public gpuaas::testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped()) return;
    stack_ = std::make_unique<PlatformStack>(dsn(), dir_.path());
    token_a_ = stack_->CreateTenant("studio-a");
    token_b_ = stack_->CreateTenant("studio-b");
    stack_->CreateSpecWithStocks("a100.1x", "A100-80GB", 1, 0, 2);
    proxy_ = std::make_unique<ProxyProcess>(dir_.path(), stack_->instance().address(),
                                            stack_->auth().address(),
                                            stack_->proxy_api_key_file().string());
    CreateWeb("web-1");
  }
  void TearDown() override {
    proxy_.reset();
    stack_.reset();
    PgTest::TearDown();
  }

  // An instance of studio-a running upstream.py: 8080 private (the probe), 9090 public.
  void CreateWeb(const std::string& id) {
    instancepb::Instance created;
    grpc::Status s = stack_->instances().CreateInstance(PlatformStack::Ctx(token_a_).get(),
                                                        UpstreamInstance(id, "a100.1x"), &created);
    ASSERT_TRUE(s.ok()) << s.error_message();
    stack_->WaitInstance(token_a_, id, [](const instancepb::Instance& i) {
      return i.state() == instancepb::STATE_RUNNING;
    });
    // The proxy learns of it through its watch.
    ASSERT_TRUE(gpuaas::testing::Eventually(
        [&] { return HttpGet(port(), HostOf(id, 8080), "/", Bearer(token_a_)).status == 200; },
        absl::Seconds(30)))
        << proxy_->Log();
  }

  int port() const { return proxy_->port(); }
  int Status(const std::string& host, const std::string& headers = "") {
    return HttpGet(port(), host, "/", headers).status;
  }

  gpuaas::testing::TempDir dir_;
  std::unique_ptr<PlatformStack> stack_;
  std::unique_ptr<ProxyProcess> proxy_;
  std::string token_a_;
  std::string token_b_;
};

TEST_F(ProxyAccessTest, TheAccessMatrix) {
  const std::string web = HostOf("web-1", 8080);
  // The owner; the workload sees neither the token nor any proxy cookie, only its instance's
  // proxy token in their place (services/proxy/proxy_token.h).
  HttpResponse owner = HttpGet(port(), web, "/headers", Bearer(token_a_));
  EXPECT_EQ(owner.status, 200);
  EXPECT_FALSE(absl::StrContains(owner.body, token_a_)) << owner.body;
  EXPECT_FALSE(absl::StrContains(owner.body, "Bearer")) << owner.body;
  EXPECT_TRUE(absl::StrContains(owner.body, "authorization: token ")) << owner.body;
  EXPECT_TRUE(absl::StrContains(owner.body, "port=8080")) << owner.body;

  // Another tenant's member: as if there were no such instance.
  HttpResponse other = HttpGet(port(), web, "/", Bearer(token_b_));
  EXPECT_EQ(other.status, 404);
  EXPECT_EQ(other.body, HttpGet(port(), HostOf("nope-1", 8080), "/", Bearer(token_a_)).body);

  // No, forged or expired credentials.
  EXPECT_EQ(Status(web), 401);
  std::string forged = token_a_;
  forged[forged.size() - 5] = forged[forged.size() - 5] == 'A' ? 'B' : 'A';
  EXPECT_EQ(Status(web, Bearer(forged)), 401);
  authz::Claims expired{.iss = "gpuaas-auth",
                        .sub = "usr_x",
                        .tenant = "studio-a",
                        .role = common::v1::ROLE_MEMBER,
                        .iat = absl::Now() - absl::Hours(2),
                        .exp = absl::Now() - absl::Hours(1),
                        .jti = "expired-1"};
  absl::StatusOr<std::string> expired_token = stack_->auth().keys().Sign(expired);
  ASSERT_TRUE(expired_token.ok());
  EXPECT_EQ(Status(web, Bearer(*expired_token)), 401);
  EXPECT_EQ(Status(HostOf("nope-1", 8080)), 401);

  // A VIEWER reads the instance but may not use it.
  stack_->auth().CreateUser("viewer-a", "studio-a", common::v1::ROLE_VIEWER);
  const std::string viewer = stack_->auth().Login(
      "viewer-a", auth::testing::AuthStack::PasswordOf("viewer-a"), "studio-a");
  EXPECT_EQ(Status(web, Bearer(viewer)), 403);

  // Unknown instance, unknown port: 404 with valid credentials.
  EXPECT_EQ(Status(HostOf("nope-1", 8080), Bearer(token_a_)), 404);
  EXPECT_EQ(Status(HostOf("web-1", 8081), Bearer(token_a_)), 404);

  // The public port needs nothing.
  HttpResponse pub = HttpGet(port(), HostOf("web-1", 9090), "/headers");
  EXPECT_EQ(pub.status, 200);
  EXPECT_TRUE(absl::StrContains(pub.body, "port=9090")) << pub.body;
  EXPECT_FALSE(absl::StrContains(pub.body, "authorization")) << "no proxy token for anyone";

  // Host tricks: absolute-form naming the private port from the public host.
  HttpConnection c(port());
  c.Send("GET http://web-1-8080.gpuaas.localhost/ HTTP/1.1\r\nHost: " + HostOf("web-1", 9090) +
         "\r\n\r\n");
  EXPECT_EQ(c.Read().status, 400);
  EXPECT_EQ(Status(HostOf("web-1", 8080) + ":9090"), 401);

  // Streaming and a WebSocket through the real workload.
  HttpConnection d(port());
  int status = 0;
  EXPECT_EQ(d.Download(web, "/stream?n=10000000", Bearer(token_a_), &status), 10000000);
  EXPECT_EQ(WebSocketEcho(port(), web, "/ws", "Bearer " + token_a_, {"hi", "there"}), "hi|there");
  EXPECT_TRUE(WebSocketEcho(port(), web, "/ws", "", {"hi"}).starts_with("error"));
}

TEST_F(ProxyAccessTest, AOneTimeLinkSetsAHostOnlyCookieOnce) {
  instancepb::GetInstanceAccessRequest req;
  req.set_instance_id("web-1");
  req.set_port(8080);
  instancepb::InstanceAccess access;
  grpc::Status s =
      stack_->instances().GetInstanceAccess(PlatformStack::Ctx(token_a_).get(), req, &access);
  ASSERT_TRUE(s.ok()) << s.error_message();
  // http://web-1-8080.gpuaas.localhost:8080/.gpuaas/access?code=...: the proxy ignores the
  // Host's port.
  const std::string url = access.url();
  const size_t host_start = url.find("://") + 3;
  const size_t path_start = url.find('/', host_start);
  const std::string host = url.substr(host_start, path_start - host_start);
  const std::string path = url.substr(path_start);

  // The link on another instance port's host does not redeem it (and leaves it unused).
  EXPECT_EQ(HttpGet(port(), HostOf("web-1", 9090), path).status, 404);

  HttpResponse redeemed = HttpGet(port(), host, path);
  ASSERT_EQ(redeemed.status, 302) << proxy_->Log();
  EXPECT_EQ(redeemed.Header("location"), "/");
  const std::string set_cookie = redeemed.Header("set-cookie");
  EXPECT_TRUE(absl::StrContains(set_cookie, "HttpOnly")) << set_cookie;
  EXPECT_TRUE(absl::StrContains(set_cookie, "SameSite=Lax")) << set_cookie;
  EXPECT_FALSE(absl::StrContains(set_cookie, "Domain")) << set_cookie;
  const std::string cookie = set_cookie.substr(0, set_cookie.find(';'));

  HttpResponse with_cookie = HttpGet(port(), host, "/headers", "Cookie: " + cookie + "\r\n");
  EXPECT_EQ(with_cookie.status, 200);
  EXPECT_FALSE(absl::StrContains(with_cookie.body, "gpuaas_access")) << with_cookie.body;
  // The cookie carried to another instance port grants nothing there.
  EXPECT_EQ(HttpGet(port(), HostOf("web-1", 8081), "/", "Cookie: " + cookie + "\r\n").status, 401);
  // The link works once.
  EXPECT_EQ(HttpGet(port(), host, path).status, 404);
}

TEST_F(ProxyAccessTest, AStoppedInstanceRoutesNoMore) {
  const std::string web = HostOf("web-1", 8080);
  instancepb::StopInstanceRequest stop;
  stop.set_instance_id("web-1");
  instancepb::Instance stopped;
  ASSERT_TRUE(
      stack_->instances().StopInstance(PlatformStack::Ctx(token_a_).get(), stop, &stopped).ok());
  EXPECT_TRUE(gpuaas::testing::Eventually([&] { return Status(web, Bearer(token_a_)) == 404; },
                                          absl::Seconds(30)));
  EXPECT_EQ(Status(HostOf("web-1", 9090)), 401);  // not public any more: nothing routes
}

TEST_F(ProxyAccessTest, TheWatchResumesAfterTheInstanceServiceRestarts) {
  stack_->instance().Kill();
  // Routes stay served from memory meanwhile.
  EXPECT_EQ(Status(HostOf("web-1", 8080), Bearer(token_a_)), 200);
  stack_->instance().Start();
  CreateWeb("web-2");  // waits until the proxy routes it
  EXPECT_EQ(Status(HostOf("web-1", 8080), Bearer(token_a_)), 200);
}

TEST_F(ProxyAccessTest, ALostNodeTakesItsRoutes) {
  const std::string web = HostOf("web-1", 8080);
  stack_->agent("node-a").Kill();
  // The workload dies with its agent's sandbox or the node is declared lost; either way the
  // route goes (never a hang or a crash).
  EXPECT_TRUE(gpuaas::testing::Eventually(
      [&] {
        const int s = Status(web, Bearer(token_a_));
        return s == 404 || s == 502;
      },
      absl::Seconds(60)));
  EXPECT_EQ(HttpGet(port(), "x", "/.gpuaas/healthz").status, 200);
}

}  // namespace
}  // namespace gpuaas::proxy_testing
