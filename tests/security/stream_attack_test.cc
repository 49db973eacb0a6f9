// Open event streams through the gateway outliving their access, run against the real auth and
// instance services with the real gateway code (in process, on a loopback port): a member who
// is removed from the tenant keeps a WatchInstances stream open from before, watching the
// tenant's instances come and go. The gateway asks about every open stream again on
// --stream-recheck (1 s here) and ends the removed member's; a member's beside it stays open.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "libs/client/auth_client.h"
#include "libs/client/channel.h"
#include "libs/common/clock.h"
#include "libs/testing/pg_test.h"
#include "libs/testing/temp_dir.h"
#include "services/gateway/gateway_server.h"
#include "services/gateway/public_services.h"
#include "tests/platform/platform_stack.h"

namespace gpuaas::platform_testing {
namespace {

constexpr absl::Duration kRecheck = absl::Seconds(1);

// An event stream opened as a browser's EventSource would, on a connection of its own.
class EventStream final {
 public:
  EventStream(int port, const std::string& path, const std::string& token) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    timeval timeout{0, 200'000};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    const std::string request =
        absl::StrCat("GET ", path, " HTTP/1.1\r\nHost: gw\r\n", "Authorization: Bearer ", token,
                     "\r\nAccept: text/event-stream\r\n"
                     "Connection: close\r\n\r\n");
    EXPECT_EQ(::send(fd_, request.data(), request.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(request.size()));
  }
  ~EventStream() { ::close(fd_); }

  // Reads what comes for up to `within`; true once the gateway has closed the stream.
  bool EndsWithin(absl::Duration within) {
    char buf[4096];
    for (const absl::Time end = absl::Now() + within; absl::Now() < end;) {
      const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) return true;
      if (n > 0) seen_.append(buf, n);
    }
    return false;
  }
  const std::string& seen() const { return seen_; }

 private:
  int fd_ = -1;
  std::string seen_;
};

class StreamAttackTest : public gpuaas::testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped()) return;
    PlatformOptions options;
    options.agents = {};
    stack_ = std::make_unique<PlatformStack>(dsn(), dir_.path(), options);
    token_a_ = stack_->CreateTenant("studio-a");
    for (const gateway::PublicService& s : gateway::kPublicServices) {
      if (s.peer != gateway::Peer::kAuth && s.peer != gateway::Peer::kInstance) continue;
      const std::string address =
          s.peer == gateway::Peer::kAuth ? stack_->auth().address() : stack_->instance().address();
      std::shared_ptr<grpc::Channel> channel = *client::OpenChannel(address, client::TlsOptions{});
      if (s.peer == gateway::Peer::kAuth) auth_ = std::make_unique<client::AuthClient>(channel);
      backends_.Add(std::string(s.name), channel);
    }
    routes_ = *gateway::RouteTable::FromServices(*gateway::PublicServiceDescriptors());
    gateway::GatewayOptions gateway_options{.host = "127.0.0.1",
                                            .threads = 16,
                                            .max_streams = 8,
                                            .max_streams_per_client = 4,
                                            .stream_keepalive = absl::Milliseconds(250),
                                            .stream_recheck = kRecheck};
    gateway_ = std::make_unique<gateway::GatewayServer>(gateway_options, routes_, backends_, *auth_,
                                                        clock_);
    ASSERT_TRUE(gateway_->Start().ok());
  }
  void TearDown() override {
    if (gateway_) gateway_->Stop();
    stack_.reset();
    PgTest::TearDown();
  }

  gpuaas::testing::TempDir dir_;
  std::unique_ptr<PlatformStack> stack_;
  std::string token_a_;
  gateway::Backends backends_;
  std::unique_ptr<client::AuthClient> auth_;
  gateway::RouteTable routes_;
  SystemClock clock_;
  std::unique_ptr<gateway::GatewayServer> gateway_;
};

TEST_F(StreamAttackTest, ARemovedMembersOpenWatchEndsWithinTheBound) {
  const std::string mate_id =
      stack_->auth().CreateUser("mate", "studio-a", common::v1::ROLE_MEMBER);
  const std::string mate =
      stack_->auth().Login("mate", auth::testing::AuthStack::PasswordOf("mate"), "studio-a");
  EventStream removed(gateway_->port(), "/v1/instances:watch", mate);
  EventStream kept(gateway_->port(), "/v1/instances:watch", token_a_);
  // Both streams are open and past their first event (the watch's SYNCED marker).
  EXPECT_FALSE(removed.EndsWithin(absl::Milliseconds(500)));
  EXPECT_FALSE(kept.EndsWithin(absl::Milliseconds(10)));
  ASSERT_EQ(removed.seen().rfind("HTTP/1.1 200", 0), 0u) << removed.seen();
  ASSERT_NE(removed.seen().find("data: "), std::string::npos) << removed.seen();

  stack_->auth().RemoveMember("studio-a", mate_id);
  // Within the bound (1 s, a quarter more, one WhoAmI), with its reason.
  EXPECT_TRUE(removed.EndsWithin(absl::Seconds(10))) << removed.seen();
  EXPECT_NE(removed.seen().find("event: error"), std::string::npos) << removed.seen();
  EXPECT_NE(removed.seen().find("no longer a member"), std::string::npos) << removed.seen();
  // The member's stream outlives several more re-checks.
  EXPECT_FALSE(kept.EndsWithin(3 * kRecheck)) << kept.seen();
}

}  // namespace
}  // namespace gpuaas::platform_testing
