// Session against in-process fakes of the auth and stock services: bearer tokens, deadlines and
// transparent refresh, with an injected clock so expiry needs no sleeping (deadlines use the
// real clock).
#include "tools/gpuaasctl/session.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <atomic>

#include "libs/client/channel.h"
#include "libs/testing/temp_dir.h"

namespace gpuaas::ctl {
namespace {

using ::gpuaas::testing::TempDir;

constexpr absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

// Accepts only the access token it last issued; Refresh issues "fresh-N" and rotates the
// refresh token.
class FakeAuth final : public authpb::AuthService::Service {
 public:
  grpc::Status Refresh(grpc::ServerContext*, const authpb::RefreshRequest* req,
                       authpb::RefreshResponse* resp) override {
    ++refreshes;
    if (req->refresh_token() != valid_refresh) {
      return {grpc::StatusCode::UNAUTHENTICATED, "refresh token revoked"};
    }
    valid_access = "fresh-" + std::to_string(refreshes.load());
    valid_refresh = "refresh-" + std::to_string(refreshes.load());
    resp->set_access_token(valid_access);
    resp->set_refresh_token(valid_refresh);
    resp->mutable_expire_time()->set_seconds(absl::ToUnixSeconds(kNow + absl::Minutes(15)));
    resp->set_tenant_id("studio-a");
    resp->set_role(common::v1::ROLE_MEMBER);
    return grpc::Status::OK;
  }

  grpc::Status WhoAmI(grpc::ServerContext* ctx, const authpb::WhoAmIRequest*,
                      authpb::WhoAmIResponse* resp) override {
    ++whoamis;
    if (ctx->deadline() == std::chrono::system_clock::time_point::max()) {
      return {grpc::StatusCode::FAILED_PRECONDITION, "no deadline"};
    }
    auto it = ctx->client_metadata().find("authorization");
    if (it == ctx->client_metadata().end() ||
        std::string(it->second.data(), it->second.size()) != "Bearer " + valid_access) {
      return {grpc::StatusCode::UNAUTHENTICATED, "bad token"};
    }
    resp->set_user_name("alice");
    return grpc::Status::OK;
  }

  std::string valid_access = "access-0";
  std::string valid_refresh = "refresh-0";
  std::atomic<int> refreshes{0};
  std::atomic<int> whoamis{0};
};

// Accepts the access token `auth` last issued, as the real stock service accepts any token the
// auth service signed.
class FakeStock final : public client::stockpb::StockService::Service {
 public:
  explicit FakeStock(const FakeAuth& auth) : auth_(auth) {}

  grpc::Status GetSpec(grpc::ServerContext* ctx, const client::stockpb::GetSpecRequest* req,
                       client::stockpb::Spec* resp) override {
    ++calls;
    if (ctx->deadline() == std::chrono::system_clock::time_point::max()) {
      return {grpc::StatusCode::FAILED_PRECONDITION, "no deadline"};
    }
    auto it = ctx->client_metadata().find("authorization");
    if (it == ctx->client_metadata().end() ||
        std::string(it->second.data(), it->second.size()) != "Bearer " + auth_.valid_access) {
      return {grpc::StatusCode::UNAUTHENTICATED, "bad token"};
    }
    resp->set_spec_name(req->spec_name());
    return grpc::Status::OK;
  }

  std::atomic<int> calls{0};

 private:
  const FakeAuth& auth_;
};

class SessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder b;
    int port = 0;
    b.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    b.RegisterService(&fake_);
    b.RegisterService(&stock_);
    server_ = b.BuildAndStart();
    ASSERT_NE(port, 0);
    addr_ = "127.0.0.1:" + std::to_string(port);
  }
  void TearDown() override { server_->Shutdown(); }

  TokenStore Store() const { return TokenStore(dir_.path() / "gpuaas/token.json"); }

  // Both services answer on the fakes' one port unless `stock_addr` says otherwise.
  std::unique_ptr<Session> NewSession(std::optional<std::string> env_token = std::nullopt,
                                      std::string stock_addr = "") {
    if (stock_addr.empty()) {
      stock_addr = addr_;
    }
    auto channel = client::OpenChannel(addr_, client::TlsOptions{});
    EXPECT_TRUE(channel.ok()) << channel.status();
    auto stock_channel = client::OpenChannel(stock_addr, client::TlsOptions{});
    EXPECT_TRUE(stock_channel.ok()) << stock_channel.status();
    return std::make_unique<Session>(
        AuthClient(*channel, absl::Seconds(10)), StockClient(*stock_channel, absl::Seconds(10)),
        StorageClient(*channel, absl::Seconds(10)), InstanceClient(*channel, absl::Seconds(10)),
        Store(), clock_, Session::Addresses{addr_, stock_addr, addr_, addr_}, std::move(env_token));
  }

  void SaveToken(const std::string& access, const std::string& refresh, absl::Time expire) {
    StoredToken t;
    t.access_token = access;
    t.refresh_token = refresh;
    t.expire_time = expire;
    ASSERT_TRUE(Store().Save(t).ok());
  }

  absl::Status WhoAmI(Session& s) {
    return s.Call(&AuthClient::WhoAmI, authpb::WhoAmIRequest()).status();
  }

  absl::Status GetSpec(Session& s) {
    client::stockpb::GetSpecRequest req;
    req.set_spec_name("a100.1x");
    return s.Call(&StockClient::GetSpec, req).status();
  }

  TempDir dir_;
  FakeClock clock_{kNow};
  FakeAuth fake_;
  FakeStock stock_{fake_};
  std::unique_ptr<grpc::Server> server_;
  std::string addr_;
};

TEST_F(SessionTest, ValidTokenIsSentWithADeadline) {
  SaveToken("access-0", "refresh-0", kNow + absl::Minutes(10));
  auto s = NewSession();
  EXPECT_TRUE(WhoAmI(*s).ok());
  EXPECT_EQ(fake_.refreshes, 0);
}

TEST_F(SessionTest, ExpiredTokenIsRefreshedAndSaved) {
  SaveToken("access-0", "refresh-0", kNow + absl::Seconds(5));  // inside the refresh skew
  auto s = NewSession();
  absl::Status st = WhoAmI(*s);
  EXPECT_TRUE(st.ok()) << st;
  EXPECT_EQ(fake_.refreshes, 1);
  EXPECT_EQ(fake_.whoamis, 1);
  auto saved = Store().Load();
  ASSERT_TRUE(saved.ok() && saved->has_value());
  EXPECT_EQ((*saved)->access_token, "fresh-1");
  EXPECT_EQ((*saved)->refresh_token, "refresh-1");
  EXPECT_EQ((*saved)->tenant_id, "studio-a");
  EXPECT_EQ((*saved)->role, "member");
}

TEST_F(SessionTest, RejectedTokenIsRefreshedOnceAndRetried) {
  SaveToken("stale", "refresh-0", kNow + absl::Minutes(10));  // the clock thinks it is valid
  auto s = NewSession();
  EXPECT_TRUE(WhoAmI(*s).ok());
  EXPECT_EQ(fake_.refreshes, 1);
  EXPECT_EQ(fake_.whoamis, 2);
}

TEST_F(SessionTest, RevokedRefreshTokenAsksForLogin) {
  SaveToken("access-0", "revoked", kNow - absl::Minutes(1));
  auto s = NewSession();
  absl::Status st = WhoAmI(*s);
  EXPECT_EQ(st.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_NE(st.message().find("gpuaasctl login"), std::string_view::npos) << st;
  EXPECT_EQ(fake_.whoamis, 0);
}

TEST_F(SessionTest, ExpiredWithoutRefreshTokenAsksForLogin) {
  SaveToken("access-0", "", kNow - absl::Minutes(1));
  auto s = NewSession();
  EXPECT_EQ(WhoAmI(*s).code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(fake_.refreshes, 0);
}

TEST_F(SessionTest, NoSessionIsUnauthenticatedWithoutACall) {
  auto s = NewSession();
  EXPECT_EQ(WhoAmI(*s).code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(fake_.whoamis, 0);
}

TEST_F(SessionTest, EnvTokenOverridesTheFileAndIsNeverRefreshed) {
  SaveToken("stale", "refresh-0", kNow + absl::Minutes(10));
  auto s = NewSession("access-0");
  EXPECT_TRUE(WhoAmI(*s).ok());
  fake_.valid_access = "other";
  EXPECT_EQ(WhoAmI(*s).code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(fake_.refreshes, 0);
}

TEST_F(SessionTest, UnreachableServerIsUnavailable) {
  SaveToken("access-0", "refresh-0", kNow + absl::Minutes(10));
  server_->Shutdown();
  auto s = NewSession();
  absl::Status st = WhoAmI(*s);
  EXPECT_EQ(st.code(), absl::StatusCode::kUnavailable) << st;
}

TEST_F(SessionTest, StockCallsCarryTheSameTokenWithADeadline) {
  SaveToken("access-0", "refresh-0", kNow + absl::Minutes(10));
  auto s = NewSession();
  absl::Status st = GetSpec(*s);
  EXPECT_TRUE(st.ok()) << st;
  EXPECT_EQ(stock_.calls, 1);
  EXPECT_EQ(fake_.refreshes, 0);
}

TEST_F(SessionTest, StockCallRejectedForItsTokenRefreshesThroughAuthAndRetries) {
  SaveToken("stale", "refresh-0", kNow + absl::Minutes(10));
  auto s = NewSession();
  absl::Status st = GetSpec(*s);
  EXPECT_TRUE(st.ok()) << st;
  EXPECT_EQ(fake_.refreshes, 1);
  EXPECT_EQ(stock_.calls, 2);
  auto saved = Store().Load();
  ASSERT_TRUE(saved.ok() && saved->has_value());
  EXPECT_EQ((*saved)->access_token, "fresh-1");
}

TEST_F(SessionTest, UnreachableStockServiceIsNamedWithItsAddress) {
  SaveToken("access-0", "refresh-0", kNow + absl::Minutes(10));
  const std::string nowhere = "unix:/nonexistent/gpuaasctl-session-test.sock";
  auto s = NewSession(std::nullopt, nowhere);
  absl::Status st = GetSpec(*s);
  EXPECT_EQ(st.code(), absl::StatusCode::kUnavailable) << st;
  EXPECT_EQ(st.message().rfind("stock service at " + nowhere + ": ", 0), 0u) << st;
  EXPECT_TRUE(WhoAmI(*s).ok()) << "the auth service is still reached";
}

TEST_F(SessionTest, UnimplementedWithoutAMessageSaysWhichServiceLacksTheCall) {
  SaveToken("access-0", "refresh-0", kNow + absl::Minutes(10));
  auto s = NewSession();
  absl::Status st = s->Call(&StockClient::ListNodes, client::stockpb::ListNodesRequest()).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kUnimplemented) << st;
  EXPECT_EQ(st.message().rfind("the stock service at " + addr_ + " does not implement", 0), 0u)
      << st;
}

TEST_F(SessionTest, StorageCallsAreNamedForTheStorageService) {
  SaveToken("access-0", "refresh-0", kNow + absl::Minutes(10));
  auto s = NewSession();
  // The fakes serve no StorageService: the call reaches the storage address and says so.
  absl::Status st =
      s->Call(&StorageClient::GetStorage, client::storagepb::GetStorageRequest()).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kUnimplemented) << st;
  EXPECT_EQ(st.message().rfind("the storage service at " + addr_ + " does not implement", 0), 0u)
      << st;
}

TEST_F(SessionTest, LoginAnswerIsStoredWithItsRefreshToken) {
  auto s = NewSession();
  authpb::LoginResponse login;
  login.set_access_token("access-0");
  login.set_refresh_token("refresh-0");
  login.mutable_expire_time()->set_seconds(absl::ToUnixSeconds(kNow + absl::Minutes(15)));
  login.set_tenant_id("studio-a");
  login.set_role(common::v1::ROLE_TENANT_ADMIN);
  ASSERT_TRUE(s->SaveLogin(login, "alice").ok());
  auto saved = Store().Load();
  ASSERT_TRUE(saved.ok() && saved->has_value());
  EXPECT_EQ((*saved)->user_name, "alice");
  EXPECT_EQ((*saved)->auth_addr, addr_);
  EXPECT_EQ((*saved)->refresh_token, "refresh-0");
  EXPECT_EQ((*saved)->role, "tenant-admin");
  EXPECT_EQ((*saved)->expire_time, kNow + absl::Minutes(15));
  EXPECT_TRUE(WhoAmI(*s).ok());
}

TEST_F(SessionTest, ApiKeyExchangeIsStoredWithoutRefreshAndExpiresForGood) {
  auto s = NewSession();
  authpb::ExchangeApiKeyResponse exchange;
  exchange.set_access_token("access-0");
  exchange.mutable_expire_time()->set_seconds(absl::ToUnixSeconds(kNow + absl::Seconds(5)));
  exchange.set_role(common::v1::ROLE_MEMBER);
  ASSERT_TRUE(s->SaveApiKeyExchange(exchange).ok());
  auto saved = Store().Load();
  ASSERT_TRUE(saved.ok() && saved->has_value());
  EXPECT_EQ((*saved)->refresh_token, "");
  EXPECT_EQ((*saved)->role, "member");
  // Inside the refresh skew with nothing to refresh with: a new exchange or login is needed.
  EXPECT_EQ(WhoAmI(*s).code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(fake_.refreshes, 0);
}

}  // namespace
}  // namespace gpuaas::ctl
