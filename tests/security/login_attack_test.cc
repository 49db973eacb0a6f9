// Password and API-key guessing from the internet (issue 32, "Logins"): the real gateway in front
// of two real gpuaas-auth processes on one database. A guesser is slowed and then refused from
// its own address; the account's owner, from anywhere else, logs in at once. The guesser cannot
// pick the address its guesses count against: X-Forwarded-For is believed only from the
// gateway's --trusted-proxies, and auth believes a client address only from the gateway's own
// key (ROLE_GATEWAY).
#include <arpa/inet.h>
#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "gpuaas/auth/v1/auth.grpc.pb.h"
#include "libs/testing/pg_test.h"
#include "libs/testing/service_dsn.h"
#include "tests/common/child_process.h"

namespace gpuaas {
namespace {

namespace fs = std::filesystem;
namespace pb = ::gpuaas::auth::v1;
using testing::ChildProcess;
using testing::FreePort;

constexpr absl::string_view kAdminPassword = "login-attack-admin-password";
constexpr absl::string_view kAttacker = "127.0.0.1";
constexpr absl::string_view kVictim = "127.0.0.2";
constexpr absl::string_view kTrustedProxy = "127.0.0.3";

struct Answer {
  int status = 0;  // 0: no answer
  std::string retry_after;
  std::string body;
};

// One HTTP/1.1 request from a socket bound to `from` (any 127/8 address is ours on loopback),
// as a client at that address would send it.
Answer HttpFrom(absl::string_view from, int port, const std::string& path, const std::string& body,
                const std::string& extra_headers = "") {
  Answer a;
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in src{.sin_family = AF_INET};
  inet_pton(AF_INET, std::string(from).c_str(), &src.sin_addr);
  sockaddr_in dst{.sin_family = AF_INET, .sin_port = htons(static_cast<uint16_t>(port))};
  inet_pton(AF_INET, "127.0.0.1", &dst.sin_addr);
  timeval timeout{.tv_sec = 30};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  if (bind(fd, reinterpret_cast<sockaddr*>(&src), sizeof(src)) != 0 ||
      connect(fd, reinterpret_cast<sockaddr*>(&dst), sizeof(dst)) != 0) {
    close(fd);
    return a;
  }
  const std::string request =
      absl::StrCat("POST ", path, " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n",
                   "Content-Type: application/json\r\nContent-Length: ", body.size(), "\r\n",
                   extra_headers, "\r\n", body);
  (void)!write(fd, request.data(), request.size());
  std::string raw;
  char buf[4096];
  for (ssize_t n; (n = read(fd, buf, sizeof(buf))) > 0;) raw.append(buf, static_cast<size_t>(n));
  close(fd);
  const size_t head_end = raw.find("\r\n\r\n");
  if (head_end == std::string::npos) return a;
  std::vector<std::string> lines = absl::StrSplit(raw.substr(0, head_end), "\r\n");
  std::vector<std::string> status_line = absl::StrSplit(lines[0], ' ');
  if (status_line.size() < 2 || !absl::SimpleAtoi(status_line[1], &a.status)) return a;
  for (const std::string& line : lines) {
    if (absl::StartsWithIgnoreCase(line, "Retry-After:")) {
      a.retry_after = std::string(absl::StripAsciiWhitespace(line.substr(12)));
    }
  }
  a.body = raw.substr(head_end + 4);
  return a;
}

std::string LoginBody(absl::string_view user, absl::string_view password) {
  return absl::StrCat(R"({"user_name": ")", user, R"(", "password": ")", password, R"("})");
}

std::unique_ptr<grpc::ClientContext> Ctx(const std::string& token = "") {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  if (!token.empty()) ctx->AddMetadata("authorization", "Bearer " + token);
  return ctx;
}

// A secret file as the platform writes one: created 0600, never readable by others.
void WriteSecret(const fs::path& path, absl::string_view secret) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0) << path;
  const std::string line = absl::StrCat(secret, "\n");
  ASSERT_EQ(write(fd, line.data(), line.size()), static_cast<ssize_t>(line.size()));
  close(fd);
}

class LoginAttackTest : public testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped()) return;
    dir_ = fs::temp_directory_path() / absl::StrCat("login-attack-", getpid(), "-", FreePort());
    fs::create_directories(dir_);
    WriteSecret(dir_ / "admin-password", kAdminPassword);
    // Two replicas on one database: a throttle one of them kept to itself would be half a
    // throttle.
    for (int i = 0; i < 2; ++i) {
      auth_ports_.push_back(FreePort());
      auth_.push_back(std::make_unique<ChildProcess>(
          std::vector<std::string>{
              GPUAAS_AUTH_BINARY, absl::StrCat("--listen=127.0.0.1:", auth_ports_[i]),
              "--metrics-listen=127.0.0.1:0", "--db-dsn=" + testing::ServiceDsn(dsn(), "auth"),
              "--bootstrap-admin-password-file=" + (dir_ / "admin-password").string()},
          (dir_ / absl::StrCat("auth-", i, ".log")).string()));
      ASSERT_TRUE(testing::WaitServing(AuthAddress(i))) << Log(absl::StrCat("auth-", i, ".log"));
      stubs_.push_back(pb::AuthService::NewStub(
          grpc::CreateChannel(AuthAddress(i), grpc::InsecureChannelCredentials())));
    }
    admin_ = GrpcLogin(0, "admin", kAdminPassword);
    ASSERT_FALSE(admin_.empty());
    // The gateway's own key: the one credential auth takes a client's address from.
    gateway_key_ = CreateKey(common::v1::ROLE_GATEWAY);
    WriteSecret(dir_ / "gateway-api-key", gateway_key_);
    gateway_port_ = FreePort();
    const std::string nowhere = absl::StrCat("127.0.0.1:", FreePort());
    gateway_ = std::make_unique<ChildProcess>(
        std::vector<std::string>{
            GPUAAS_GATEWAY_BINARY, absl::StrCat("--listen=127.0.0.1:", gateway_port_),
            "--metrics-listen=127.0.0.1:0", "--auth-addr=" + AuthAddress(0),
            "--stock-addr=" + nowhere, "--storage-addr=" + nowhere, "--instance-addr=" + nowhere,
            "--api-key-file=" + (dir_ / "gateway-api-key").string(),
            absl::StrCat("--trusted-proxies=", kTrustedProxy, "/32")},
        (dir_ / "gateway.log").string());
    for (int i = 0; i < 200 && Rest(kVictim, "/healthz", "").status != 200; ++i) {
      usleep(50'000);
    }
    ASSERT_EQ(Rest(kVictim, "/healthz", "").status, 200) << Log("gateway.log");
  }

  void TearDown() override {
    gateway_.reset();
    auth_.clear();
    if (!dir_.empty()) fs::remove_all(dir_);
    PgTest::TearDown();
  }

  std::string AuthAddress(int i) const { return absl::StrCat("127.0.0.1:", auth_ports_[i]); }

  std::string Log(const std::string& name) const {
    std::ifstream in(dir_ / name);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  Answer Rest(absl::string_view from, const std::string& path, const std::string& body,
              const std::string& headers = "") {
    return HttpFrom(from, gateway_port_, path, body, headers);
  }

  grpc::Status GrpcLoginStatus(
      int replica, absl::string_view user, absl::string_view password,
      const std::vector<std::pair<std::string, std::string>>& metadata = {},
      std::string* token = nullptr) {
    pb::LoginRequest req;
    req.set_user_name(std::string(user));
    req.set_password(std::string(password));
    pb::LoginResponse resp;
    auto ctx = Ctx();
    for (const auto& [k, v] : metadata) ctx->AddMetadata(k, v);
    grpc::Status s = stubs_[replica]->Login(ctx.get(), req, &resp);
    if (token != nullptr) *token = resp.access_token();
    return s;
  }

  std::string GrpcLogin(int replica, absl::string_view user, absl::string_view password) {
    std::string token;
    grpc::Status s = GrpcLoginStatus(replica, user, password, {}, &token);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return token;
  }

  std::string CreateKey(common::v1::Role role) {
    pb::CreateApiKeyRequest req;
    req.set_name(absl::StrCat("key-", role));
    req.set_role(role);
    req.set_request_id(absl::StrCat("login-attack-key-", role));
    pb::CreateApiKeyResponse resp;
    grpc::Status s = stubs_[0]->CreateApiKey(Ctx(admin_).get(), req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return resp.secret();
  }

  grpc::Status GrpcExchange(int replica, const std::string& secret,
                            const std::vector<std::pair<std::string, std::string>>& metadata = {},
                            std::string* token = nullptr) {
    pb::ExchangeApiKeyRequest req;
    req.set_secret(secret);
    pb::ExchangeApiKeyResponse resp;
    auto ctx = Ctx();
    for (const auto& [k, v] : metadata) ctx->AddMetadata(k, v);
    grpc::Status s = stubs_[replica]->ExchangeApiKey(ctx.get(), req, &resp);
    if (token != nullptr) *token = resp.access_token();
    return s;
  }

  fs::path dir_;
  std::vector<int> auth_ports_;
  std::vector<std::unique_ptr<ChildProcess>> auth_;
  std::vector<std::unique_ptr<pb::AuthService::Stub>> stubs_;
  std::unique_ptr<ChildProcess> gateway_;
  int gateway_port_ = 0;
  std::string admin_;
  std::string gateway_key_;
};

// What a run of guesses from one address was answered.
struct Tally {
  int refused = 0;    // 401: the guess was judged
  int throttled = 0;  // 429 with a Retry-After
  int other = 0;
  bool names_account = false;
  int last = 0;
};

TEST_F(LoginAttackTest, GuessesLockOutTheGuesserNeverTheAdmin) {
  // The admin has used the REST login before (the gateway has its own token by then).
  ASSERT_EQ(Rest(kVictim, "/v1/auth:login", LoginBody("admin", kAdminPassword)).status, 200);

  // 30 wrong passwords for the admin from one address, each claiming through X-Forwarded-For to
  // come from somewhere else (among them the victim's own address): the gateway's peer is not a
  // trusted proxy, so every claim is ignored, and the guesses neither spread over fresh
  // addresses nor land on the victim's.
  Tally t;
  for (int i = 0; i < 30; ++i) {
    const std::string spoof = i % 2 == 0 ? std::string(kVictim) : absl::StrCat("203.0.113.", i);
    Answer a = Rest(kAttacker, "/v1/auth:login", LoginBody("admin", absl::StrCat("guess-", i)),
                    absl::StrCat("X-Forwarded-For: ", spoof, "\r\nForwarded: for=", spoof, "\r\n"));
    if (a.status == 401) {
      ++t.refused;
    } else if (a.status == 429 && !a.retry_after.empty()) {
      ++t.throttled;
    } else {
      ++t.other;
      ADD_FAILURE() << "guess " << i << ": " << a.status << " " << a.body;
    }
    t.names_account |= absl::StrContains(a.body, "admin");
    t.last = a.status;
  }
  // After 5 wrong guesses the address waits 1 s, then 2 s, 4 s... each further one: however
  // slow this machine, most of the 30 are refused unjudged.
  EXPECT_GE(t.throttled, 15) << "refused " << t.refused;
  EXPECT_LE(t.refused, 12);
  EXPECT_EQ(t.last, 429);
  EXPECT_FALSE(t.names_account) << "a refusal must not say whose login was guessed";

  // The guesser's own address stays throttled, right password or not...
  Answer own = Rest(kAttacker, "/v1/auth:login", LoginBody("admin", kAdminPassword));
  EXPECT_EQ(own.status, 429) << own.body;
  EXPECT_GE(std::stoi(own.retry_after.empty() ? "0" : own.retry_after), 1);
  // ...and the admin, from its own address, logs in at once: through the REST login, through
  // the console's session, and through a trusted proxy that names yet another client.
  Answer victim = Rest(kVictim, "/v1/auth:login", LoginBody("admin", kAdminPassword));
  EXPECT_EQ(victim.status, 200) << victim.body;
  EXPECT_TRUE(absl::StrContains(victim.body, "access_token")) << victim.body;
  Answer console = Rest(kVictim, "/api/session", LoginBody("admin", kAdminPassword));
  EXPECT_EQ(console.status, 200) << console.body;
  Answer proxied = Rest(kTrustedProxy, "/v1/auth:login", LoginBody("admin", kAdminPassword),
                        "X-Forwarded-For: 198.51.100.7\r\n");
  EXPECT_EQ(proxied.status, 200) << proxied.body;
  // A trusted proxy relaying the guesser is the guesser: still throttled.
  Answer relayed = Rest(kTrustedProxy, "/v1/auth:login", LoginBody("admin", kAdminPassword),
                        absl::StrCat("X-Forwarded-For: ", kAttacker, "\r\n"));
  EXPECT_EQ(relayed.status, 429) << relayed.body;
}

TEST_F(LoginAttackTest, ManyUsersFromOneAddressAreThrottledByTheAddress) {
  ASSERT_EQ(Rest(kVictim, "/v1/auth:login", LoginBody("admin", kAdminPassword)).status, 200);
  // A spray: one guess for each of many names, none reaching its own account's limit.
  int throttled = 0;
  for (int i = 0; i < 40; ++i) {
    Answer a = Rest(kAttacker, "/v1/auth:login", LoginBody(absl::StrCat("user", i), "guess"));
    throttled += a.status == 429;
  }
  EXPECT_GE(throttled, 10);
  EXPECT_EQ(Rest(kVictim, "/v1/auth:login", LoginBody("admin", kAdminPassword)).status, 200);
}

TEST_F(LoginAttackTest, ForgedClientAddressOnDirectGrpcIsIgnored) {
  ASSERT_EQ(Rest(kVictim, "/v1/auth:login", LoginBody("admin", kAdminPassword)).status, 200);
  // Callers on auth's gRPC port claim client addresses: with a made-up forwarder token, and
  // with the strongest token there is that is not the gateway's (a platform admin key's).
  const std::string admin_key = CreateKey(common::v1::ROLE_PLATFORM_ADMIN);
  std::string strong;
  ASSERT_TRUE(GrpcExchange(0, admin_key, {}, &strong).ok());
  int throttled = 0;
  for (int i = 0; i < 12; ++i) {
    std::vector<std::pair<std::string, std::string>> forged = {
        {"x-gpuaas-client-address", absl::StrCat("198.51.100.", i)},
        {"x-gpuaas-forwarder", i % 2 == 0 ? "Bearer " + strong : "Bearer not-a-token"}};
    grpc::Status s = GrpcLoginStatus(i % 2, "admin", absl::StrCat("guess-", i), forged);
    throttled += s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED;
    EXPECT_NE(s.error_code(), grpc::StatusCode::OK);
  }
  // Counted against the caller's own address (127.0.0.1), on both replicas together.
  EXPECT_GE(throttled, 5);
  // The gateway's own token does vouch: the admin, named as at another address, logs in, and
  // the REST login from the admin's own address works too.
  std::string gateway_token;
  ASSERT_TRUE(GrpcExchange(1, gateway_key_, {}, &gateway_token).ok());
  EXPECT_TRUE(GrpcLoginStatus(1, "admin", kAdminPassword,
                              {{"x-gpuaas-client-address", "198.51.100.200"},
                               {"x-gpuaas-forwarder", "Bearer " + gateway_token}})
                  .ok());
  EXPECT_EQ(Rest(kVictim, "/v1/auth:login", LoginBody("admin", kAdminPassword)).status, 200);
}

TEST_F(LoginAttackTest, TheThrottleHoldsAcrossReplicas) {
  // Alternating replicas: five wrong guesses in all lock the address on both.
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(GrpcLoginStatus(i % 2, "admin", absl::StrCat("guess-", i)).error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
  }
  for (int replica : {0, 1}) {
    grpc::Status s = GrpcLoginStatus(replica, "admin", kAdminPassword);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << replica;
    EXPECT_FALSE(absl::StrContains(s.error_message(), "admin")) << s.error_message();
  }
  EXPECT_EQ(Rest(kVictim, "/v1/auth:login", LoginBody("admin", kAdminPassword)).status, 200);
}

TEST_F(LoginAttackTest, ApiKeyGuessesLockOutTheGuesserNeverTheKey) {
  ASSERT_EQ(Rest(kVictim, "/v1/auth:login", LoginBody("admin", kAdminPassword)).status, 200);
  const std::string key = CreateKey(common::v1::ROLE_PLATFORM_ADMIN);
  const std::string key_id = key.substr(0, key.find('.'));
  Tally t;
  for (int i = 0; i < 30; ++i) {
    Answer a = Rest(kAttacker, "/v1/apiKeys:exchange",
                    absl::StrCat(R"({"secret": ")", key_id, ".guess", i, R"("})"),
                    absl::StrCat("X-Forwarded-For: ", kVictim, "\r\n"));
    t.refused += a.status == 401;
    t.throttled += a.status == 429 && !a.retry_after.empty();
    t.last = a.status;
  }
  EXPECT_GE(t.throttled, 15) << "refused " << t.refused;
  EXPECT_EQ(t.last, 429);
  // Forged addresses on auth's own port count against the caller too.
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(GrpcExchange(i % 2, key, {{"x-gpuaas-client-address", "198.51.100.1"}}).error_code(),
              grpc::StatusCode::RESOURCE_EXHAUSTED);
  }
  // The key's owner, from its own address, exchanges at once.
  Answer owner =
      Rest(kVictim, "/v1/apiKeys:exchange", absl::StrCat(R"({"secret": ")", key, R"("})"));
  EXPECT_EQ(owner.status, 200) << owner.body;
}

}  // namespace
}  // namespace gpuaas
