// Attacks on the access proxy, run the way an outsider would: raw HTTP from a client, a page on
// another tenant's instance (its Origin, Sec-Fetch-Site), a member who was removed, a flood of
// connections, requests framed to smuggle another. The proxy is the real binary
// (tests/proxy/proxy_process.h); workloads are tests/proxy/upstream.py, which echoes what it
// receives, so each test sees exactly what reached the workload.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
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

// The raw answer to `request` sent from source address `from` (any 127.x address) to the
// proxy; "" when the connection was refused or closed before answering.
std::string RawFrom(const std::string& from, int port, const std::string& request) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in src{.sin_family = AF_INET, .sin_port = 0, .sin_addr = {}};
  inet_pton(AF_INET, from.c_str(), &src.sin_addr);
  sockaddr_in dst{.sin_family = AF_INET, .sin_port = htons(port), .sin_addr = {}};
  inet_pton(AF_INET, "127.0.0.1", &dst.sin_addr);
  timeval timeout{.tv_sec = 5, .tv_usec = 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  std::string answer;
  if (bind(fd, reinterpret_cast<sockaddr*>(&src), sizeof(src)) == 0 &&
      connect(fd, reinterpret_cast<sockaddr*>(&dst), sizeof(dst)) == 0 &&
      send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(request.size())) {
    char buf[4096];
    ssize_t n;
    while ((n = recv(fd, buf, sizeof(buf), 0)) > 0) {
      answer.append(buf, n);
      if (answer.find("\r\n\r\n") != std::string::npos) break;
    }
  }
  close(fd);
  return answer;
}

// A token-shaped credential of ours: the proxy knows it by its issuer, signed or not.
constexpr char kOurToken[] =
    "eyJhbGciOiJFZERTQSJ9.eyJpc3MiOiJncHVhYXMtYXV0aCIsInN1YiI6InVzcl8xIn0.c2ln";

// ---------------------------------------------------------------------------------------------
// Static routes (no platform): framing, connection caps, credentials on public routes.

class ProxyAttackStaticTest : public ::testing::Test {
 protected:
  void SetUp() override {
    upstream_port_ = testing::FreePort();
    upstream_ = StartUpstream(upstream_port_, dir_.path() / "upstream.log");
    const std::string api_key = (dir_.path() / "api-key").string();
    std::ofstream(api_key) << "unused.unused\n";
    proxy_ = std::make_unique<ProxyProcess>(
        dir_.path(), "127.0.0.1:1", "127.0.0.1:1", api_key,
        std::vector<std::string>{"--static-route-for-benchmarks=web-1-8080=ten-b@127.0.0.1:" +
                                     std::to_string(upstream_port_) + ",public",
                                 "--max-connections-per-client=4"});
  }
  int port() const { return proxy_->port(); }
  std::string Seen() { return HttpGet(upstream_port_, "x", "/seen").body; }

  gpuaas::testing::TempDir dir_;
  int upstream_port_ = 0;
  std::unique_ptr<testing::ChildProcess> upstream_;
  std::unique_ptr<ProxyProcess> proxy_;
};

// Hole 5: a public port is another tenant's workload; our token must never reach it.
TEST_F(ProxyAttackStaticTest, APublicRouteNeverSeesOurCredentials) {
  const std::string web = HostOf("web-1", 8080);
  for (const std::string& credential : {std::string(kOurToken), std::string("gak_k1.secret")}) {
    HttpResponse r = HttpGet(port(), web, "/headers",
                             Bearer(credential) + "Cookie: app=1; gpuaas_access=stolen\r\n");
    ASSERT_EQ(r.status, 200) << proxy_->Log();
    EXPECT_FALSE(absl::StrContains(r.body, "authorization")) << r.body;
    EXPECT_FALSE(absl::StrContains(r.body, "gpuaas_access")) << r.body;
    EXPECT_TRUE(absl::StrContains(r.body, "cookie: app=1\n")) << r.body;
  }
  // The application's own credentials still reach it.
  HttpResponse own = HttpGet(port(), web, "/headers", "Authorization: Basic dXNlcjpwdw==\r\n");
  EXPECT_TRUE(absl::StrContains(own.body, "authorization: Basic dXNlcjpwdw==")) << own.body;
}

// RFC 9112 §6.1/6.3: anything but a single final chunked is refused, and the body (a second
// request hidden in it) never reaches the workload.
TEST_F(ProxyAttackStaticTest, AmbiguousTransferEncodingCannotSmuggleARequest) {
  const std::string web = HostOf("web-1", 8080);
  const std::string hidden = "0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: " + web + "\r\n\r\n";
  for (const std::string& framing :
       {std::string("Transfer-Encoding: identity, chunked\r\n"),
        std::string("Transfer-Encoding: chunked, chunked\r\n"),
        std::string("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n"),
        std::string("Transfer-Encoding: gzip\r\n"),
        std::string("Transfer-Encoding: gzip, chunked\r\n"),
        std::string("Transfer-Encoding: chunked\r\nContent-Length: 5\r\n"),
        std::string("Content-Length: 5\r\nTransfer-Encoding: chunked\r\n")}) {
    HttpConnection c(port());
    c.Send("POST /upload HTTP/1.1\r\nHost: " + web + "\r\n" + framing + "\r\n" + hidden);
    HttpResponse r = c.Read();
    EXPECT_EQ(r.status, 400) << framing;
    EXPECT_TRUE(c.WaitClosed(5000)) << framing;
  }
  EXPECT_FALSE(absl::StrContains(Seen(), "smuggled")) << Seen();
  EXPECT_FALSE(absl::StrContains(Seen(), "POST /upload")) << Seen();
  // A plain chunked body still goes through.
  HttpConnection c(port());
  EXPECT_EQ(c.PostChunked(web, "/upload", "", 1000, 100).body, "received 1000\n");
}

// One client holding every connection it may cannot starve another.
TEST_F(ProxyAttackStaticTest, OneClientCannotTakeEveryConnection) {
  const std::string web = HostOf("web-1", 8080);
  std::vector<std::unique_ptr<HttpConnection>> held;
  for (int i = 0; i < 4; ++i) {
    held.push_back(std::make_unique<HttpConnection>(port()));
    ASSERT_EQ(held.back()->Get(web, "/").status, 200) << i;  // accepted and counted
  }
  const std::string get = "GET / HTTP/1.1\r\nHost: " + web + "\r\nConnection: close\r\n\r\n";
  const std::string refused = RawFrom("127.0.0.1", port(), get);
  EXPECT_TRUE(refused.empty() || refused.starts_with("HTTP/1.1 503")) << refused;
  EXPECT_TRUE(RawFrom("127.0.0.2", port(), get).starts_with("HTTP/1.1 200")) << proxy_->Log();
  // Its slots come back when it lets go.
  held.clear();
  EXPECT_TRUE(gpuaas::testing::Eventually(
      [&] { return RawFrom("127.0.0.1", port(), get).starts_with("HTTP/1.1 200"); },
      absl::Seconds(5)));
}

// ---------------------------------------------------------------------------------------------
// The whole platform: real tokens, one-time links, a sandboxed workload, memberships.

class ProxyAttackTest : public gpuaas::testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped()) return;
    stack_ = std::make_unique<PlatformStack>(dsn(), dir_.path());
    token_a_ = stack_->CreateTenant("studio-a");
    stack_->CreateSpecWithStocks("a100.1x", "A100-80GB", 1, 0, 2);
    proxy_ = std::make_unique<ProxyProcess>(
        dir_.path(), stack_->instance().address(), stack_->auth().address(),
        stack_->proxy_api_key_file().string(), std::vector<std::string>{"--grant-recheck=1s"});
    instancepb::Instance created;
    grpc::Status s = stack_->instances().CreateInstance(
        PlatformStack::Ctx(token_a_).get(), UpstreamInstance("web-1", "a100.1x"), &created);
    ASSERT_TRUE(s.ok()) << s.error_message();
    stack_->WaitInstance(token_a_, "web-1", [](const instancepb::Instance& i) {
      return i.state() == instancepb::STATE_RUNNING;
    });
    ASSERT_TRUE(gpuaas::testing::Eventually(
        [&] { return HttpGet(port(), web_, "/", Bearer(token_a_)).status == 200; },
        absl::Seconds(30)))
        << proxy_->Log();
  }
  void TearDown() override {
    proxy_.reset();
    stack_.reset();
    PgTest::TearDown();
  }
  int port() const { return proxy_->port(); }

  // "gpuaas_access=..." from redeeming a one-time link made by `token`'s user.
  std::string CookieOf(const std::string& token) {
    instancepb::GetInstanceAccessRequest req;
    req.set_instance_id("web-1");
    req.set_port(8080);
    instancepb::InstanceAccess access;
    grpc::Status s =
        stack_->instances().GetInstanceAccess(PlatformStack::Ctx(token).get(), req, &access);
    EXPECT_TRUE(s.ok()) << s.error_message();
    const std::string path = access.url().substr(access.url().find("/.gpuaas/"));
    HttpResponse redeemed = HttpGet(port(), web_, path);
    EXPECT_EQ(redeemed.status, 302) << proxy_->Log();
    const std::string set_cookie = redeemed.Header("set-cookie");
    return set_cookie.substr(0, set_cookie.find(';'));
  }

  // A cookie-carrying request of `method` with `extra` header lines; its status.
  int WithCookie(const std::string& cookie, const std::string& method, const std::string& extra) {
    HttpConnection c(port());
    c.Send(method + " /headers HTTP/1.1\r\nHost: " + web_ + "\r\nCookie: " + cookie +
           "\r\nContent-Length: 0\r\n" + extra + "\r\n");
    return c.Read().status;
  }

  const std::string web_ = HostOf("web-1", 8080);
  const std::string own_origin_ = "Origin: http://" + HostOf("web-1", 8080) + "\r\n";
  gpuaas::testing::TempDir dir_;
  std::unique_ptr<PlatformStack> stack_;
  std::unique_ptr<ProxyProcess> proxy_;
  std::string token_a_;
};

// Hole 5 on the real platform: neither the private nor the public port's workload sees the
// caller's token or the proxy's cookie (a private port gets its instance's proxy token instead,
// proxy_token.h).
TEST_F(ProxyAttackTest, TheWorkloadNeverSeesOurTokenOrCookie) {
  const std::string cookie = CookieOf(token_a_);
  for (const std::string& host : {web_, HostOf("web-1", 9090)}) {
    HttpResponse r =
        HttpGet(port(), host, "/headers", Bearer(token_a_) + "Cookie: " + cookie + "; app=1\r\n");
    ASSERT_EQ(r.status, 200) << host;
    EXPECT_FALSE(absl::StrContains(r.body, token_a_)) << r.body;
    EXPECT_FALSE(absl::StrContains(r.body, "Bearer")) << r.body;
    EXPECT_FALSE(absl::StrContains(r.body, "gpuaas_access")) << r.body;
    EXPECT_TRUE(absl::StrContains(r.body, "cookie: app=1\n")) << r.body;
  }
}

// A page on another instance (same site: every instance host is under one domain) makes the
// victim's browser send the cookie with a POST or a WebSocket upgrade: refused. The same
// requests from the instance's own pages work.
TEST_F(ProxyAttackTest, AnotherInstancesPageCannotWriteOrOpenAWebSocketWithTheCookie) {
  const std::string cookie = CookieOf(token_a_);
  const std::string evil = "Origin: http://" + HostOf("evil-1", 9090) + "\r\n";
  EXPECT_EQ(WithCookie(cookie, "POST", evil + "Sec-Fetch-Site: same-site\r\n"), 403);
  EXPECT_EQ(WithCookie(cookie, "DELETE", evil), 403);
  EXPECT_EQ(WithCookie(cookie, "PUT", "Sec-Fetch-Site: cross-site\r\n"), 403);
  EXPECT_EQ(WithCookie(cookie, "POST", "Origin: null\r\n"), 403);
  EXPECT_EQ(WithCookie(cookie, "POST", own_origin_ + "Sec-Fetch-Site: same-origin\r\n"), 200);

  const std::string upgrade =
      "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n";
  auto ws = [&](const std::string& origin) {
    HttpConnection c(port());
    c.Send("GET /ws HTTP/1.1\r\nHost: " + web_ + "\r\nCookie: " + cookie + "\r\n" + upgrade +
           origin + "\r\n");
    return c.Read().status;
  };
  EXPECT_EQ(ws(evil), 403);
  EXPECT_EQ(ws("Sec-Fetch-Site: cross-site\r\n"), 403);
  EXPECT_EQ(ws(own_origin_), 101);
}

// A member removed from the tenant keeps the cookie, but not the access: within the re-check
// bound (--grant-recheck=1s here) the proxy hears from the instance service and refuses.
TEST_F(ProxyAttackTest, ARemovedMemberLosesTheCookiesAccessWithinTheBound) {
  const std::string mate_id =
      stack_->auth().CreateUser("mate", "studio-a", common::v1::ROLE_MEMBER);
  const std::string mate =
      stack_->auth().Login("mate", auth::testing::AuthStack::PasswordOf("mate"), "studio-a");
  const std::string cookie = CookieOf(mate);
  ASSERT_EQ(WithCookie(cookie, "GET", ""), 200);

  stack_->auth().RemoveMember("studio-a", mate_id);
  const absl::Time start = absl::Now();
  EXPECT_TRUE(gpuaas::testing::Eventually([&] { return WithCookie(cookie, "GET", "") == 403; },
                                          absl::Seconds(10)))
      << proxy_->Log();
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  // Who still may keeps access past the bound (asked again): a member, a platform admin.
  const std::string owner = CookieOf(token_a_);
  const std::string admin = CookieOf(stack_->admin_token());
  absl::SleepFor(absl::Milliseconds(1500));
  EXPECT_EQ(WithCookie(owner, "GET", ""), 200);
  EXPECT_EQ(WithCookie(admin, "GET", ""), 200);
}

// A colleague's Jupyter kernel WebSocket, opened with the one-time link's cookie, outlives the
// member's removal by at most the re-check bound (--grant-recheck=1s here, plus its RPC): the
// proxy asks about open connections as it does about new requests, and ends them. A member's
// socket beside it stays open past the bound.
TEST_F(ProxyAttackTest, ARemovedMembersOpenWebSocketEndsWithinTheBound) {
  const std::string mate_id =
      stack_->auth().CreateUser("mate", "studio-a", common::v1::ROLE_MEMBER);
  const std::string mate =
      stack_->auth().Login("mate", auth::testing::AuthStack::PasswordOf("mate"), "studio-a");
  const std::string origin = "http://" + web_;
  OpenWebSocket removed(port(), web_, "/ws", {{"Cookie", CookieOf(mate)}, {"Origin", origin}});
  OpenWebSocket kept(port(), web_, "/ws", {{"Cookie", CookieOf(token_a_)}, {"Origin", origin}});
  ASSERT_EQ(removed.Echo("print(1)"), "print(1)") << proxy_->Log();
  ASSERT_EQ(kept.Echo("print(1)"), "print(1)");

  stack_->auth().RemoveMember("studio-a", mate_id);
  const absl::Time start = absl::Now();
  EXPECT_TRUE(gpuaas::testing::Eventually(
      [&] { return removed.Echo("print(2)").starts_with("error"); }, absl::Seconds(15)))
      << proxy_->Log();
  EXPECT_LT(absl::Now() - start, absl::Seconds(8));
  // Past at least one more re-check, the member's kernel still answers.
  absl::SleepFor(absl::Milliseconds(1500));
  EXPECT_EQ(kept.Echo("print(3)"), "print(3)") << proxy_->Log();
}

// The instance stops: every open WebSocket to it ends within the bound, whatever opened it (the
// cookie, a bearer token).
TEST_F(ProxyAttackTest, OpenWebSocketsEndWhenTheInstanceStops) {
  const std::string origin = "http://" + web_;
  OpenWebSocket by_cookie(port(), web_, "/ws",
                          {{"Cookie", CookieOf(token_a_)}, {"Origin", origin}});
  OpenWebSocket by_token(port(), web_, "/ws", {{"Authorization", "Bearer " + token_a_}});
  ASSERT_EQ(by_cookie.Echo("a"), "a") << proxy_->Log();
  ASSERT_EQ(by_token.Echo("b"), "b");

  instancepb::StopInstanceRequest stop;
  stop.set_instance_id("web-1");
  instancepb::Instance stopped;
  ASSERT_TRUE(
      stack_->instances().StopInstance(PlatformStack::Ctx(token_a_).get(), stop, &stopped).ok());
  EXPECT_TRUE(gpuaas::testing::Eventually(
      [&] {
        return by_cookie.Echo("c").starts_with("error") && by_token.Echo("d").starts_with("error");
      },
      absl::Seconds(30)))
      << proxy_->Log();
}

}  // namespace
}  // namespace gpuaas::proxy_testing
