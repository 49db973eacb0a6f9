// Forwarding through a real gpuaas-proxy process to a real upstream (tests/proxy/upstream.py)
// on public static routes (--static-route-for-benchmarks), no platform needed: streaming both
// ways, keep-alive, WebSocket, and the faults — an upstream that breaks off or cannot be
// reached, slowloris clients, Host tricks.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "libs/testing/eventually.h"
#include "libs/testing/temp_dir.h"
#include "tests/proxy/http_client.h"
#include "tests/proxy/proxy_process.h"
#include "tests/proxy/upstream_workload.h"

namespace gpuaas::proxy_testing {
namespace {

class ProxyForwardingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    upstream_port_ = testing::FreePort();
    closed_port_ = testing::FreePort();  // nobody listens there
    upstream_ = StartUpstream(upstream_port_, dir_.path() / "upstream.log");
    const std::string up = std::to_string(upstream_port_);
    const std::string api_key = (dir_.path() / "api-key").string();
    std::ofstream(api_key) << "unused.unused\n";
    proxy_ = std::make_unique<ProxyProcess>(
        dir_.path(), "127.0.0.1:1", "127.0.0.1:1", api_key,
        std::vector<std::string>{
            "--static-route-for-benchmarks=web-1-8080=ten-a@127.0.0.1:" + up + ",public",
            "--static-route-for-benchmarks=web-2-8080=ten-b@127.0.0.1:" + up + ",public",
            "--static-route-for-benchmarks=private-1-8080=ten-a@127.0.0.1:" + up,
            "--static-route-for-benchmarks=gone-1-8080=ten-a@127.0.0.1:" +
                std::to_string(closed_port_) + ",public",
            "--header-timeout=2s"});
  }

  void TearDown() override {
    if (silent_fd_ >= 0) close(silent_fd_);
  }

  // A workload that takes connections (the kernel's backlog does) and never answers.
  int ListenWithoutAnswering() {
    silent_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{.sin_family = AF_INET, .sin_port = 0, .sin_addr = {htonl(INADDR_LOOPBACK)}};
    socklen_t len = sizeof addr;
    if (bind(silent_fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
        listen(silent_fd_, 16) != 0 ||
        getsockname(silent_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      ADD_FAILURE() << "listen: " << std::strerror(errno);
    }
    return ntohs(addr.sin_port);
  }

  int port() const { return proxy_->port(); }

  gpuaas::testing::TempDir dir_;
  int upstream_port_ = 0;
  int closed_port_ = 0;
  int silent_fd_ = -1;
  std::unique_ptr<testing::ChildProcess> upstream_;
  std::unique_ptr<ProxyProcess> proxy_;
};

TEST_F(ProxyForwardingTest, ForwardsWithForwardedHeadersAndKeepsConnectionsAlive) {
  HttpConnection c(port());
  for (int i = 0; i < 3; ++i) {
    HttpResponse r = c.Get(HostOf("web-1", 8080), "/headers", "Cookie: a=1; gpuaas_access=x\r\n");
    ASSERT_EQ(r.status, 200) << proxy_->Log();
    EXPECT_TRUE(absl::StrContains(r.body, "x-forwarded-for: 127.0.0.1")) << r.body;
    EXPECT_TRUE(absl::StrContains(r.body, "x-forwarded-proto: http")) << r.body;
    EXPECT_TRUE(absl::StrContains(r.body, "x-forwarded-host: web-1-8080.gpuaas.localhost"));
    // The proxy's own cookie never reaches the workload; the workload's cookies do.
    EXPECT_TRUE(absl::StrContains(r.body, "cookie: a=1\n")) << r.body;
    EXPECT_FALSE(absl::StrContains(r.body, "gpuaas_access")) << r.body;
  }
}

TEST_F(ProxyForwardingTest, StreamsChunkedBodiesBothWays) {
  HttpConnection c(port());
  int status = 0;
  const int64_t n = 64LL << 20;
  EXPECT_EQ(c.Download(HostOf("web-1", 8080), "/stream?n=" + std::to_string(n), "", &status), n);
  EXPECT_EQ(status, 200);
  HttpResponse up = c.PostChunked(HostOf("web-1", 8080), "/upload", "", 48LL << 20, 100000);
  EXPECT_EQ(up.status, 200);
  EXPECT_EQ(up.body, "received " + std::to_string(48LL << 20) + "\n");
  // The same connection serves on after both.
  HttpResponse after = c.Get(HostOf("web-1", 8080), "/");
  EXPECT_EQ(after.status, 200) << after.body << proxy_->Log();
}

// Chunk framing that arrives apart from its data (a size line, then a pause) is never sent on
// as a zero-size chunk: that would end the body early at the workload, and the rest of it
// would be read there as the next request.
TEST_F(ProxyForwardingTest, ChunkFramingArrivingAloneNeverEndsTheBodyEarly) {
  HttpConnection c(port());
  const std::vector<std::string> pieces = {
      "POST /upload HTTP/1.1\r\nHost: " + HostOf("web-1", 8080) +
          "\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n",
      "hello\r\n",
      "6\r\n",
      " world\r\n",
      "0\r\n",
      "\r\n"};
  for (const std::string& piece : pieces) {
    ASSERT_TRUE(c.Send(piece));
    absl::SleepFor(absl::Milliseconds(30));  // each piece its own read at the proxy
  }
  HttpResponse up = c.Read();
  EXPECT_EQ(up.status, 200) << proxy_->Log();
  EXPECT_EQ(up.body, "received 11\n");
  HttpResponse after = c.Get(HostOf("web-1", 8080), "/");
  EXPECT_EQ(after.status, 200) << after.body << proxy_->Log();
}

TEST_F(ProxyForwardingTest, TunnelsWebSockets) {
  EXPECT_EQ(WebSocketEcho(port(), HostOf("web-1", 8080), "/ws", "", {"one", "two", "three"}),
            "one|two|three");
}

TEST_F(ProxyForwardingTest, AnUpstreamThatBreaksOffEndsTheResponse) {
  HttpConnection c(port());
  EXPECT_EQ(c.Get(HostOf("web-1", 8080), "/cut").status, 0);  // incomplete: no response
  EXPECT_EQ(HttpGet(port(), HostOf("web-1", 8080), "/").status, 200);
}

TEST_F(ProxyForwardingTest, AnUnreachableUpstreamIs502) {
  HttpResponse r = HttpGet(port(), HostOf("gone-1", 8080), "/");
  EXPECT_EQ(r.status, 502);
  EXPECT_EQ(HttpGet(port(), HostOf("web-1", 8080), "/").status, 200);
}

TEST_F(ProxyForwardingTest, AWorkloadThatNeverAnswersIs502AfterTheUpstreamTimeout) {
  // A proxy of its own: a short --upstream-timeout on the shared one would cut off the big
  // uploads above on a busy machine.
  const std::string silent = std::to_string(ListenWithoutAnswering());
  std::filesystem::create_directories(dir_.path() / "short");
  ProxyProcess proxy(
      dir_.path() / "short", "127.0.0.1:1", "127.0.0.1:1", (dir_.path() / "api-key").string(),
      {"--static-route-for-benchmarks=silent-1-8080=ten-a@127.0.0.1:" + silent + ",public",
       "--upstream-timeout=1s"});
  const absl::Time start = absl::Now();
  HttpResponse r = HttpGet(proxy.port(), HostOf("silent-1", 8080), "/");
  EXPECT_EQ(r.status, 502) << proxy.Log();
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(900));  // it did wait for the workload
}

TEST_F(ProxyForwardingTest, HostTricksNeverReachAnotherInstance) {
  // Absolute-form naming web-2, Host naming web-1: refused, never web-2.
  HttpConnection a(port());
  a.Send("GET http://web-2-8080.gpuaas.localhost/ HTTP/1.1\r\nHost: " + HostOf("web-1", 8080) +
         "\r\n\r\n");
  EXPECT_EQ(a.Read().status, 400);
  HttpConnection b(port());
  b.Send("GET / HTTP/1.1\r\nHost: " + HostOf("web-1", 8080) + "\r\nHost: " + HostOf("web-2", 8080) +
         "\r\n\r\n");
  EXPECT_EQ(b.Read().status, 400);
  HttpConnection none(port());
  none.Send("GET / HTTP/1.1\r\n\r\n");
  EXPECT_EQ(none.Read().status, 400);
  // The Host's port is not the instance port: still web-1's 8080 (public), and a private
  // instance named with a public port in the Host's port stays private.
  EXPECT_EQ(HttpGet(port(), HostOf("web-1", 8080) + ":9090", "/").body,
            "hello from " + std::to_string(upstream_port_) + "\n");
  EXPECT_EQ(HttpGet(port(), HostOf("private-1", 8080) + ":8080", "/").status, 401);
  EXPECT_EQ(HttpGet(port(), "web-1-08080.gpuaas.localhost", "/").status, 404);
  EXPECT_EQ(HttpGet(port(), "web-1-8080.gpuaas.localhost.evil.example", "/").status, 404);
  EXPECT_EQ(HttpGet(port(), "127.0.0.1", "/").status, 404);
}

TEST_F(ProxyForwardingTest, SlowlorisClientsAreCutOffAndHoldUpNobody) {
  const long rss_before = proxy_->RssKib();
  std::vector<std::unique_ptr<HttpConnection>> slow;
  for (int i = 0; i < 200; ++i) {
    slow.push_back(std::make_unique<HttpConnection>(port()));
    ASSERT_TRUE(slow.back()->Send("GET / HTTP/1.1\r\nHost: " + HostOf("web-1", 8080) + "\r\nX-"));
  }
  // Others are served meanwhile.
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(HttpGet(port(), HostOf("web-1", 8080), "/").status, 200);
  }
  // A head larger than the limit is refused, not buffered.
  HttpConnection big(port());
  big.Send("GET / HTTP/1.1\r\nHost: " + HostOf("web-1", 8080) +
           "\r\nX-Big: " + std::string(64 * 1024, 'b') + "\r\n\r\n");
  EXPECT_EQ(big.Read().status, 431);
  // Each slow client is disconnected once --header-timeout passes.
  for (auto& c : slow) {
    c->Send("a");
    EXPECT_TRUE(c->WaitClosed(30000));
  }
  // 200 slow connections cost little memory (bounded head buffers, no thread each).
  EXPECT_LT(proxy_->RssKib() - rss_before, 32 * 1024) << "KiB";
}

}  // namespace
}  // namespace gpuaas::proxy_testing
