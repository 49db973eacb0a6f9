#include "libs/authz/verifier.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "libs/authz/jwt.h"

namespace gpuaas::authz {
namespace {

using ::gpuaas::common::v1::ROLE_MEMBER;

// A JwksSource whose document, availability and fetch count the test controls. The state is
// shared because the authenticator owns the source itself.
struct SourceState {
  absl::Mutex mu;
  std::string json ABSL_GUARDED_BY(mu);
  absl::Status status ABSL_GUARDED_BY(mu);
  int fetches ABSL_GUARDED_BY(mu) = 0;
  // When set, FetchJwks announces itself and waits for `release`.
  absl::Notification* entered ABSL_GUARDED_BY(mu) = nullptr;
  absl::Notification* release ABSL_GUARDED_BY(mu) = nullptr;

  void Publish(const std::vector<PublicJwk>& keys) {
    absl::MutexLock lock(&mu);
    json = JwksJson(keys);
    status = absl::OkStatus();
  }
  void Fail(absl::Status s) {
    absl::MutexLock lock(&mu);
    status = std::move(s);
  }
  int Fetches() {
    absl::MutexLock lock(&mu);
    return fetches;
  }
};

class FakeSource final : public JwksSource {
 public:
  explicit FakeSource(std::shared_ptr<SourceState> state) : state_(std::move(state)) {}
  absl::StatusOr<std::string> FetchJwks() override {
    absl::Notification* entered;
    absl::Notification* release;
    {
      absl::MutexLock lock(&state_->mu);
      ++state_->fetches;
      entered = state_->entered;
      release = state_->release;
    }
    if (entered != nullptr) {
      entered->Notify();
      release->WaitForNotification();
    }
    absl::MutexLock lock(&state_->mu);
    if (!state_->status.ok()) {
      return state_->status;
    }
    return state_->json;
  }

 private:
  std::shared_ptr<SourceState> state_;
};

class VerifierTest : public ::testing::Test {
 protected:
  VerifierTest()
      : state_(std::make_shared<SourceState>()),
        k1_(Ed25519Key::Generate()),
        k2_(Ed25519Key::Generate()),
        auth_(NewJwksAuthenticator(std::make_unique<FakeSource>(state_), clock_)) {}

  std::string Token(std::string_view kid, const Ed25519Key& key,
                    absl::Duration ttl = absl::Minutes(15)) {
    Claims c;
    c.kid = std::string(kid);
    c.iss = "gpuaas-auth";
    c.sub = "usr_alice";
    c.tenant = "ten_acme";
    c.role = ROLE_MEMBER;
    c.iat = clock_.Now();
    c.exp = clock_.Now() + ttl;
    c.jti = "tok_1";
    c.api_key_id = "akey_9";
    return "Bearer " + SignJwt(c, key);
  }

  PublicJwk Jwk(std::string kid, const Ed25519Key& key) {
    return {std::move(kid), key.PublicRaw()};
  }

  FakeClock clock_;
  std::shared_ptr<SourceState> state_;
  Ed25519Key k1_;
  Ed25519Key k2_;
  std::unique_ptr<Authenticator> auth_;
};

TEST_F(VerifierTest, AuthenticatesAndCaches) {
  state_->Publish({Jwk("k1", k1_)});
  const std::string token = Token("k1", k1_);
  for (int i = 0; i < 10; ++i) {
    absl::StatusOr<Principal> p = auth_->Authenticate(token);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(p->user_id, "usr_alice");
    EXPECT_EQ(p->tenant_id, "ten_acme");
    EXPECT_EQ(p->role, ROLE_MEMBER);
    EXPECT_EQ(p->token_id, "tok_1");
    EXPECT_EQ(p->api_key_id, "akey_9");
  }
  EXPECT_EQ(state_->Fetches(), 1);
}

TEST_F(VerifierTest, ParsesTheBearerScheme) {
  state_->Publish({Jwk("k1", k1_)});
  const std::string jwt = Token("k1", k1_).substr(7);
  EXPECT_TRUE(auth_->Authenticate("bearer " + jwt).ok());
  EXPECT_TRUE(auth_->Authenticate("BEARER   " + jwt + " ").ok());
  for (const std::string& bad : {std::string(), std::string("Bearer"), std::string("Bearer "),
                                 "Basic " + jwt, "Bearer" + jwt, jwt, "Bearer " + jwt + " x"}) {
    absl::StatusOr<Principal> p = auth_->Authenticate(bad);
    EXPECT_EQ(p.status().code(), absl::StatusCode::kUnauthenticated) << bad;
  }
}

TEST_F(VerifierTest, RejectsExpiredAndForgedTokens) {
  state_->Publish({Jwk("k1", k1_)});
  const std::string token = Token("k1", k1_, absl::Minutes(1));
  EXPECT_TRUE(auth_->Authenticate(token).ok());
  clock_.Advance(absl::Minutes(2));
  EXPECT_EQ(auth_->Authenticate(token).status().code(), absl::StatusCode::kUnauthenticated);
  // Signed by k2 but naming k1.
  EXPECT_EQ(auth_->Authenticate(Token("k1", k2_)).status().code(),
            absl::StatusCode::kUnauthenticated);
}

TEST_F(VerifierTest, RefetchesOnUnknownKidAtMostOncePerInterval) {
  state_->Publish({Jwk("k1", k1_)});
  ASSERT_TRUE(auth_->Authenticate(Token("k1", k1_)).ok());
  ASSERT_EQ(state_->Fetches(), 1);

  const std::string unknown = Token("k2", k2_);
  // Within min_refetch_interval of the first fetch: refused without asking the source.
  EXPECT_EQ(auth_->Authenticate(unknown).status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(state_->Fetches(), 1);

  clock_.Advance(absl::Seconds(10));
  for (int i = 0; i < 5; ++i) {
    absl::StatusOr<Principal> p = auth_->Authenticate(unknown);
    EXPECT_EQ(p.status().code(), absl::StatusCode::kUnauthenticated);
    EXPECT_EQ(p.status().message(), "unknown signing key");
  }
  EXPECT_EQ(state_->Fetches(), 2);  // one refetch for the whole burst

  clock_.Advance(absl::Seconds(9));
  EXPECT_FALSE(auth_->Authenticate(unknown).ok());
  EXPECT_EQ(state_->Fetches(), 2);
  clock_.Advance(absl::Seconds(1));
  EXPECT_FALSE(auth_->Authenticate(unknown).ok());
  EXPECT_EQ(state_->Fetches(), 3);
}

TEST_F(VerifierTest, KeyRotation) {
  state_->Publish({Jwk("k1", k1_)});
  const std::string old_token = Token("k1", k1_);
  ASSERT_TRUE(auth_->Authenticate(old_token).ok());

  // The auth service starts signing with k2 and publishes both.
  state_->Publish({Jwk("k1", k1_), Jwk("k2", k2_)});
  clock_.Advance(absl::Seconds(10));
  const std::string new_token = Token("k2", k2_);
  absl::StatusOr<Principal> p = auth_->Authenticate(new_token);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(auth_->Authenticate(old_token).ok());
  EXPECT_EQ(state_->Fetches(), 2);

  // k1 is retired; once the cache ages out, its tokens stop verifying.
  state_->Publish({Jwk("k2", k2_)});
  clock_.Advance(absl::Minutes(5));
  EXPECT_TRUE(auth_->Authenticate(Token("k2", k2_)).ok());
  EXPECT_EQ(state_->Fetches(), 3);
  EXPECT_EQ(auth_->Authenticate(Token("k1", k1_)).status().code(),
            absl::StatusCode::kUnauthenticated);
  // Including a token that verified (and was remembered) under the old key set.
  EXPECT_EQ(auth_->Authenticate(old_token).status().code(), absl::StatusCode::kUnauthenticated);
}

TEST_F(VerifierTest, UnavailableOnlyWithoutAnyKeys) {
  state_->Fail(absl::UnavailableError("connection refused"));
  const std::string token = Token("k1", k1_);
  absl::StatusOr<Principal> p = auth_->Authenticate(token);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(auth_->Authenticate(token).status().code(), absl::StatusCode::kUnavailable);
  // A header that is not a bearer token is refused without touching the source.
  const int fetches = state_->Fetches();
  EXPECT_EQ(auth_->Authenticate("Basic xyz").status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(state_->Fetches(), fetches);

  state_->Publish({Jwk("k1", k1_)});
  ASSERT_TRUE(auth_->Authenticate(token).ok());

  // Once keys were fetched, an outage only means they are kept past max_age.
  state_->Fail(absl::UnavailableError("connection refused"));
  clock_.Advance(absl::Minutes(6));
  EXPECT_TRUE(auth_->Authenticate(Token("k1", k1_)).ok());
  EXPECT_EQ(auth_->Authenticate(Token("k2", k2_)).status().code(),
            absl::StatusCode::kUnauthenticated);
}

TEST_F(VerifierTest, MalformedJwksCountsAsAFailedFetch) {
  {
    absl::MutexLock lock(&state_->mu);
    state_->json = "{not json";
  }
  EXPECT_EQ(auth_->Authenticate(Token("k1", k1_)).status().code(), absl::StatusCode::kUnavailable);
}

TEST_F(VerifierTest, RefreshesAfterMaxAge) {
  state_->Publish({Jwk("k1", k1_)});
  ASSERT_TRUE(auth_->Authenticate(Token("k1", k1_)).ok());
  clock_.Advance(absl::Minutes(4));
  ASSERT_TRUE(auth_->Authenticate(Token("k1", k1_)).ok());
  EXPECT_EQ(state_->Fetches(), 1);
  clock_.Advance(absl::Minutes(1));
  ASSERT_TRUE(auth_->Authenticate(Token("k1", k1_)).ok());
  EXPECT_EQ(state_->Fetches(), 2);
}

TEST_F(VerifierTest, NeverWaitsForARefreshWhenItHasKeys) {
  state_->Publish({Jwk("k1", k1_)});
  const std::string token = Token("k1", k1_, absl::Hours(1));
  ASSERT_TRUE(auth_->Authenticate(token).ok());
  clock_.Advance(absl::Minutes(6));  // the cache is now due for a refresh

  absl::Notification entered;
  absl::Notification release;
  {
    absl::MutexLock lock(&state_->mu);
    state_->entered = &entered;
    state_->release = &release;
  }
  std::thread refresher([&] { EXPECT_TRUE(auth_->Authenticate(token).ok()); });
  entered.WaitForNotification();
  // The refresh is stuck in the source; this must be answered from the cached keys (a
  // deadlock here would mean the mutex is held across the fetch).
  EXPECT_TRUE(auth_->Authenticate(token).ok());
  EXPECT_EQ(state_->Fetches(), 2);
  release.Notify();
  refresher.join();
  {
    absl::MutexLock lock(&state_->mu);
    state_->entered = nullptr;
    state_->release = nullptr;
  }
}

TEST_F(VerifierTest, ConcurrentSmoke) {
  state_->Publish({Jwk("k1", k1_), Jwk("k2", k2_)});
  const std::string good1 = Token("k1", k1_, absl::Hours(2));
  const std::string good2 = Token("k2", k2_, absl::Hours(2));
  Ed25519Key k3 = Ed25519Key::Generate();
  const std::string unknown = Token("k3", k3, absl::Hours(2));
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 300; ++i) {
        const int pick = (t + i) % 3;
        absl::StatusOr<Principal> p = auth_->Authenticate(pick == 0   ? good1
                                                          : pick == 1 ? good2
                                                                      : unknown);
        if (p.ok() != (pick != 2)) {
          failures.fetch_add(1);
        }
        if (t == 0 && i % 50 == 0) {
          clock_.Advance(absl::Minutes(1));
        }
      }
    });
  }
  for (std::thread& th : threads) {
    th.join();
  }
  EXPECT_EQ(failures.load(), 0);
  // 300 unknown-kid tokens and 6 minutes of clock: refetches stay rate-limited.
  EXPECT_LE(state_->Fetches(), 1 + 6 * 2);
}

}  // namespace
}  // namespace gpuaas::authz
