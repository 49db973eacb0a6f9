// GatewayServer over real sockets, in front of in-process fakes of the services: what only shows
// with a client that connects, waits and leaves (an event stream's call, the session refresh).
#include "services/gateway/gateway_server.h"

#include <arpa/inet.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gpuaas/auth/v1/auth.grpc.pb.h"
#include "gpuaas/instance/v1/instance.grpc.pb.h"
#include "libs/client/channel.h"
#include "services/gateway/public_services.h"

namespace gpuaas::gateway {
namespace {

namespace authpb = ::gpuaas::auth::v1;
namespace instancepb = ::gpuaas::instance::v1;

// Follows logs that never come (a silent workload) until the caller cancels.
class SilentLogs final : public instancepb::InstanceService::Service {
 public:
  grpc::Status GetInstanceLogs(grpc::ServerContext* ctx, const instancepb::GetInstanceLogsRequest*,
                               grpc::ServerWriter<instancepb::LogChunk>*) override {
    ++opened;
    while (!ctx->IsCancelled()) absl::SleepFor(absl::Milliseconds(5));
    ++cancelled;
    return grpc::Status::CANCELLED;
  }
  std::atomic<int> opened{0};
  std::atomic<int> cancelled{0};
};

// Refreshes any token at once, except "slow-refresh", which waits for `release`.
class FakeAuth final : public authpb::AuthService::Service {
 public:
  grpc::Status Refresh(grpc::ServerContext*, const authpb::RefreshRequest* req,
                       authpb::RefreshResponse* resp) override {
    ++refreshes;
    if (req->refresh_token() == "slow-refresh") {
      slow_started.Notify();
      release.WaitForNotification();
    }
    resp->set_access_token("access-after-" + req->refresh_token());
    resp->set_refresh_token("next-" + req->refresh_token());
    return grpc::Status::OK;
  }
  grpc::Status Login(grpc::ServerContext*, const authpb::LoginRequest* req,
                     authpb::LoginResponse* resp) override {
    resp->set_access_token("access-of-" + req->user_name());
    resp->set_refresh_token("refresh-of-" + req->user_name());
    return grpc::Status::OK;
  }
  grpc::Status WhoAmI(grpc::ServerContext*, const authpb::WhoAmIRequest*,
                      authpb::WhoAmIResponse* resp) override {
    resp->set_user_name("alice");
    return grpc::Status::OK;
  }
  std::atomic<int> refreshes{0};
  absl::Notification slow_started;
  absl::Notification release;
};

int Connect(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  timeval timeout{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  return fd;
}

void SendAll(int fd, const std::string& text) {
  ASSERT_EQ(::send(fd, text.data(), text.size(), MSG_NOSIGNAL), static_cast<ssize_t>(text.size()));
}

// `request` over a fresh connection; the whole answer (the server closes after it).
std::string Exchange(int port, const std::string& request) {
  int fd = Connect(port);
  SendAll(fd, request);
  std::string answer;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof(buf), 0)) > 0;) answer.append(buf, n);
  ::close(fd);
  return answer;
}

class GatewayServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&logs_);
    builder.RegisterService(&auth_service_);
    services_ = builder.BuildAndStart();
    std::shared_ptr<grpc::Channel> channel =
        *client::OpenChannel(absl::StrCat("127.0.0.1:", port), client::TlsOptions{});
    backends_.Add("gpuaas.instance.v1.InstanceService", channel);
    auth_ = std::make_unique<client::AuthClient>(channel);
    auto services = PublicServiceDescriptors();
    ASSERT_TRUE(services.ok());
    auto routes = RouteTable::FromServices(*services);
    ASSERT_TRUE(routes.ok()) << routes.status();
    routes_ = *std::move(routes);
    server_ = StartGateway({});
  }

  // A gateway on a free port; `secure_cookies`: TLS ends in front of it.
  std::unique_ptr<GatewayServer> StartGateway(GatewayOptions options) {
    options.host = "127.0.0.1";
    options.threads = 8;
    options.max_streams = 4;
    options.max_streams_per_client = 1;
    options.stream_keepalive = absl::Milliseconds(50);
    auto server = std::make_unique<GatewayServer>(options, routes_, backends_, *auth_, clock_);
    EXPECT_TRUE(server->Start().ok());
    return server;
  }

  void TearDown() override {
    if (!auth_service_.release.HasBeenNotified()) auth_service_.release.Notify();
    server_->Stop();
    services_->Shutdown();
  }

  SilentLogs logs_;
  FakeAuth auth_service_;
  std::unique_ptr<grpc::Server> services_;
  Backends backends_;
  std::unique_ptr<client::AuthClient> auth_;
  RouteTable routes_;
  SystemClock clock_;
  std::unique_ptr<GatewayServer> server_;
};

// Waits up to 5 s for `done`.
bool Eventually(const std::function<bool()>& done) {
  for (absl::Time end = absl::Now() + absl::Seconds(5); absl::Now() < end;) {
    if (done()) return true;
    absl::SleepFor(absl::Milliseconds(10));
  }
  return done();
}

// A tab closed while its log follow waits for the first line: the call is cancelled and the
// stream's place is free again, not held until the workload writes something.
TEST_F(GatewayServerTest, AClientThatLeavesBeforeTheFirstEventEndsItsCall) {
  const std::string follow =
      "GET /v1/instances/ins-1/logs?follow=true HTTP/1.1\r\nHost: gw\r\n"
      "Authorization: Bearer t\r\n\r\n";
  int fd = Connect(server_->port());
  SendAll(fd, follow);
  ASSERT_TRUE(Eventually([&] { return logs_.opened == 1; }));
  ::close(fd);
  EXPECT_TRUE(Eventually([&] { return logs_.cancelled == 1; })) << "the call outlived its client";
  // Its place under --max-streams-per-client (1 here) is free for the next tab.
  int again = Connect(server_->port());
  SendAll(again, follow);
  EXPECT_TRUE(Eventually([&] { return logs_.opened == 2; }));
  ::close(again);
}

// The console's POST /api/session:refresh for the session whose refresh cookie is `token`.
std::string Refresh(int port, const std::string& token) {
  return Exchange(port, absl::StrCat("POST /api/session:refresh HTTP/1.1\r\nHost: gw\r\n"
                                     "Connection: close\r\nContent-Type: application/json\r\n"
                                     "Cookie: gpuaas_session=s-",
                                     token, "; gpuaas_refresh=", token,
                                     "\r\nX-CSRF-Token: ", CsrfTokenFor("s-" + token),
                                     "\r\nContent-Length: 2\r\n\r\n{}"));
}

// One tab's slow refresh does not hold up another user's.
TEST_F(GatewayServerTest, RefreshesOfDifferentSessionsDoNotWaitForEachOther) {
  auto refresh = [&](const std::string& token) { return Refresh(server_->port(), token); };
  std::thread slow([&] { refresh("slow-refresh"); });
  ASSERT_TRUE(auth_service_.slow_started.WaitForNotificationWithTimeout(absl::Seconds(5)));
  const absl::Time start = absl::Now();
  const std::string answer = refresh("fast-refresh");
  EXPECT_LT(absl::Now() - start, absl::Seconds(2)) << "waited for another session's refresh";
  EXPECT_EQ(answer.rfind("HTTP/1.1 200", 0), 0u) << answer;
  EXPECT_NE(answer.find("gpuaas_session=access-after-fast-refresh"), std::string::npos) << answer;
  auth_service_.release.Notify();
  slow.join();
}

// Two tabs of one session refreshing at once: one refresh reaches the auth service (a second
// would look like a replayed token), and both tabs get its answer.
TEST_F(GatewayServerTest, TwoTabsRefreshingAtOnceShareOneRefresh) {
  std::string first;
  std::string second;
  std::thread a([&] { first = Refresh(server_->port(), "slow-refresh"); });
  ASSERT_TRUE(auth_service_.slow_started.WaitForNotificationWithTimeout(absl::Seconds(5)));
  std::thread b([&] { second = Refresh(server_->port(), "slow-refresh"); });
  absl::SleepFor(absl::Milliseconds(200));  // b is waiting for a's refresh by now
  auth_service_.release.Notify();
  a.join();
  b.join();
  EXPECT_EQ(auth_service_.refreshes, 1);
  for (const std::string* answer : {&first, &second}) {
    EXPECT_EQ(answer->rfind("HTTP/1.1 200", 0), 0u) << *answer;
    EXPECT_NE(answer->find("gpuaas_refresh=next-slow-refresh"), std::string::npos) << *answer;
  }
}

// The console's login as a browser sends it from the page at `origin`.
std::string LoginFrom(int port, const std::string& origin) {
  const std::string body = R"({"user_name": "alice", "password": "pw"})";
  return Exchange(port, absl::StrCat("POST /api/session HTTP/1.1\r\nHost: console.example\r\n"
                                     "Connection: close\r\nContent-Type: application/json\r\n"
                                     "Origin: ",
                                     origin, "\r\nSec-Fetch-Site: same-origin\r\n",
                                     "Content-Length: ", body.size(), "\r\n\r\n", body));
}

// With TLS ended in front (--secure-cookies), the console's page is https://: its own requests
// are not another site's, and a plain http:// page still is.
TEST_F(GatewayServerTest, BehindATlsTerminatorTheConsolesOwnOriginIsHttps) {
  std::unique_ptr<GatewayServer> behind = StartGateway({.secure_cookies = true});
  const std::string own = LoginFrom(behind->port(), "https://console.example");
  EXPECT_EQ(own.rfind("HTTP/1.1 200", 0), 0u) << own;
  EXPECT_NE(own.find("gpuaas_session=access-of-alice; HttpOnly; Path=/; SameSite=Strict; Secure"),
            std::string::npos)
      << own;
  const std::string plain = LoginFrom(behind->port(), "http://console.example");
  EXPECT_EQ(plain.rfind("HTTP/1.1 403", 0), 0u) << plain;
  behind->Stop();
  // Without a terminator the page is http:// (this test's gateway speaks no TLS).
  const std::string direct = LoginFrom(server_->port(), "http://console.example");
  EXPECT_EQ(direct.rfind("HTTP/1.1 200", 0), 0u) << direct;
}

// A credential gRPC cannot carry as metadata (bytes outside printable ASCII, which HTTP allows
// in a header) is refused or ignored, never sent: gRPC aborts the process on metadata it finds
// illegal, so one such request took the gateway down.
TEST_F(GatewayServerTest, ACredentialGrpcCannotCarryNeverReachesACall) {
  auto get = [&](const std::string& path, const std::string& header) {
    return Exchange(server_->port(), absl::StrCat("GET ", path, " HTTP/1.1\r\nHost: gw\r\n",
                                                  "Connection: close\r\n", header, "\r\n\r\n"));
  };
  for (const char* bad : {"Bearer \xff\xfe", "Bearer a\tb"}) {
    const std::string answer = get("/v1/instances/ins-1", absl::StrCat("Authorization: ", bad));
    EXPECT_EQ(answer.rfind("HTTP/1.1 401", 0), 0u) << bad << ": " << answer;
  }
  // A cookie we never set is no session: the call goes without a credential (this fake then
  // says it serves no GetInstance), and the console is asked to log in.
  const std::string cookie = get("/v1/instances/ins-1", "Cookie: gpuaas_session=\xc3\xa9t\xc3\xa9");
  EXPECT_EQ(cookie.rfind("HTTP/1.1 501", 0), 0u) << cookie;
  const std::string session = get("/api/session", "Cookie: gpuaas_session=\xff");
  EXPECT_EQ(session.rfind("HTTP/1.1 401", 0), 0u) << session;
}

}  // namespace
}  // namespace gpuaas::gateway
