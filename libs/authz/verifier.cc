// The JWKS-caching Authenticator. Verification is local and lock-free apart from taking a
// snapshot of the key set; the network is touched only to fill or refresh that set.
#include "libs/authz/verifier.h"

#include <map>
#include <optional>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "libs/authz/jwt.h"
#include "libs/authz/verified_token_cache.h"
#include "libs/common/logging.h"

namespace gpuaas::authz {
namespace {

// About 4 MB at most: enough for every client of a busy replica within one token lifetime.
constexpr size_t kVerifiedTokenCapacity = 10000;

// An immutable set of public keys; shared by snapshot so verification never holds the mutex.
class KeySet final : public KeyLookup {
 public:
  explicit KeySet(std::map<std::string, Ed25519Key, std::less<>> keys) : keys_(std::move(keys)) {}
  const Ed25519Key* Find(std::string_view kid) const override {
    auto it = keys_.find(kid);
    return it == keys_.end() ? nullptr : &it->second;
  }

 private:
  const std::map<std::string, Ed25519Key, std::less<>> keys_;
};

// Remembers whether the token named a kid we do not have, the one failure a refetch can cure.
class MissRecorder final : public KeyLookup {
 public:
  explicit MissRecorder(const KeyLookup& inner) : inner_(inner) {}
  const Ed25519Key* Find(std::string_view kid) const override {
    const Ed25519Key* key = inner_.Find(kid);
    missed_ = key == nullptr;
    return key;
  }
  bool missed() const { return missed_; }

 private:
  const KeyLookup& inner_;
  mutable bool missed_ = false;
};

absl::StatusOr<std::shared_ptr<const KeySet>> BuildKeySet(std::string_view jwks_json) {
  absl::StatusOr<std::vector<PublicJwk>> jwks = ParseJwksJson(jwks_json);
  if (!jwks.ok()) {
    return jwks.status();
  }
  std::map<std::string, Ed25519Key, std::less<>> keys;
  for (PublicJwk& jwk : *jwks) {
    absl::StatusOr<Ed25519Key> key = Ed25519Key::FromPublicRaw(jwk.public_raw);
    if (!key.ok()) {
      return key.status();
    }
    keys.emplace(std::move(jwk.kid), *std::move(key));
  }
  return std::make_shared<const KeySet>(std::move(keys));
}

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

std::string_view TrimLeft(std::string_view s) {
  while (!s.empty() && IsBlank(s.front())) {
    s.remove_prefix(1);
  }
  return s;
}

std::string_view Trim(std::string_view s) {
  s = TrimLeft(s);
  while (!s.empty() && IsBlank(s.back())) {
    s.remove_suffix(1);
  }
  return s;
}

// Our abseil's string helpers take absl::string_view, which is not std::string_view here.
bool EqualsIgnoreAsciiCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
    if (lower(a[i]) != lower(b[i])) {
      return false;
    }
  }
  return true;
}

// "Bearer <token>": the scheme is case-insensitive (RFC 7235 §2.1); surrounding blanks are
// tolerated, anything after the token is not.
absl::StatusOr<std::string_view> BearerToken(std::string_view header) {
  constexpr std::string_view kScheme = "bearer";
  header = Trim(header);
  if (header.size() <= kScheme.size() ||
      !EqualsIgnoreAsciiCase(header.substr(0, kScheme.size()), kScheme) ||
      !IsBlank(header[kScheme.size()])) {
    return absl::UnauthenticatedError("missing bearer token");
  }
  std::string_view token = TrimLeft(header.substr(kScheme.size()));
  if (token.empty() || token.find_first_of(" \t") != std::string_view::npos) {
    return absl::UnauthenticatedError("missing bearer token");
  }
  return token;
}

class JwksAuthenticator final : public Authenticator {
 public:
  JwksAuthenticator(std::unique_ptr<JwksSource> source, const Clock& clock, VerifierOptions options)
      : source_(std::move(source)), clock_(clock), options_(std::move(options)) {}

  absl::StatusOr<Principal> Authenticate(std::string_view authorization_header) override {
    absl::StatusOr<std::string_view> token = BearerToken(authorization_header);
    if (!token.ok()) {
      return token.status();
    }
    Snapshot snap;
    absl::Status keys_status = Keys(/*unknown_kid=*/false, /*seen_generation=*/0, snap);
    if (!keys_status.ok()) {
      return keys_status;
    }
    const absl::Time now = clock_.Now();
    if (std::optional<Principal> hit =
            verified_.Find(*token, snap.generation, now, options_.leeway)) {
      return *std::move(hit);
    }
    absl::StatusOr<Claims> claims = Verify(*token, snap);
    if (!claims.ok() && snap.missed) {
      // A key the auth service has rotated in since our last fetch.
      keys_status = Keys(/*unknown_kid=*/true, snap.generation, snap);
      if (!keys_status.ok()) {
        return keys_status;
      }
      claims = Verify(*token, snap);
    }
    if (!claims.ok()) {
      return claims.status();
    }
    Principal p;
    p.user_id = std::move(claims->sub);
    p.tenant_id = std::move(claims->tenant);
    p.role = claims->role;
    p.token_id = std::move(claims->jti);
    p.api_key_id = std::move(claims->api_key_id);
    p.node_id = std::move(claims->node);
    p.audience = std::move(claims->aud);
    p.purpose = std::move(claims->purpose);
    verified_.Insert(*token, snap.generation, p, claims->iat, claims->exp, now);
    return p;
  }

 private:
  struct Snapshot {
    std::shared_ptr<const KeySet> keys;
    uint64_t generation = 0;
    bool missed = false;
  };

  absl::StatusOr<Claims> Verify(std::string_view token, Snapshot& snap) const {
    MissRecorder lookup(*snap.keys);
    absl::StatusOr<Claims> claims =
        VerifyJwt(token, lookup, options_.issuer, clock_.Now(), options_.leeway, options_.audience);
    snap.missed = lookup.missed();
    return claims;
  }

  // Fills `snap` with the key set to verify against, fetching first when the cache is empty,
  // older than max_age, or (for `unknown_kid`) still the set the caller already tried. One
  // fetch runs at a time and never under the lock; callers that can proceed with the keys we
  // have do so instead of waiting for it.
  absl::Status Keys(bool unknown_kid, uint64_t seen_generation, Snapshot& snap)
      ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    const uint64_t attempts_before = attempts_;
    while (true) {
      const absl::Time now = clock_.Now();
      bool want;
      if (keys_ == nullptr) {
        // Nobody has keys; but if an attempt we waited for just failed, report it rather
        // than queue another one per waiting caller.
        if (attempts_ != attempts_before) {
          return Unavailable();
        }
        want = true;
      } else if (unknown_kid) {
        if (generation_ != seen_generation) {
          break;  // someone fetched since the caller looked; try the new set first
        }
        want = now - last_attempt_ >= options_.min_refetch_interval && attempts_ == attempts_before;
      } else {
        want = now - fetched_at_ >= options_.max_age &&
               now - last_attempt_ >= options_.min_refetch_interval;
      }
      if (!want) {
        break;
      }
      if (fetching_) {
        if (keys_ != nullptr && !unknown_kid) {
          break;  // refreshing an aged set: the old keys still serve meanwhile
        }
        mu_.Await(absl::Condition(
            +[](bool* fetching) { return !*fetching; }, &fetching_));
        continue;
      }
      FetchUnlocked(now);  // at most one fetch per call, whatever the clock did meanwhile
      break;
    }
    if (keys_ == nullptr) {
      return Unavailable();
    }
    snap.keys = keys_;
    snap.generation = generation_;
    return absl::OkStatus();
  }

  // Runs one fetch with `mu_` released around the network call.
  void FetchUnlocked(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    fetching_ = true;
    last_attempt_ = now;
    mu_.Unlock();
    absl::StatusOr<std::string> json = source_->FetchJwks();
    absl::StatusOr<std::shared_ptr<const KeySet>> keys =
        json.ok() ? BuildKeySet(*json)
                  : absl::StatusOr<std::shared_ptr<const KeySet>>(json.status());
    const absl::Time done = clock_.Now();
    mu_.Lock();
    fetching_ = false;
    ++attempts_;
    if (keys.ok()) {
      keys_ = *std::move(keys);
      ++generation_;
      fetched_at_ = done;
      last_error_ = absl::OkStatus();
    } else {
      last_error_ = keys.status();
      Logger("authz")->warn("JWKS fetch failed: {}", keys.status().ToString());
    }
  }

  absl::Status Unavailable() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return absl::UnavailableError("token signing keys unavailable: " +
                                  std::string(last_error_.message()));
  }

  const std::unique_ptr<JwksSource> source_;
  const Clock& clock_;
  const VerifierOptions options_;

  VerifiedTokenCache verified_{kVerifiedTokenCapacity};

  absl::Mutex mu_;
  std::shared_ptr<const KeySet> keys_ ABSL_GUARDED_BY(mu_);
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;  // bumps on every successful fetch
  uint64_t attempts_ ABSL_GUARDED_BY(mu_) = 0;    // bumps on every finished fetch
  bool fetching_ ABSL_GUARDED_BY(mu_) = false;
  absl::Time fetched_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  absl::Time last_attempt_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  absl::Status last_error_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

std::unique_ptr<Authenticator> NewJwksAuthenticator(std::unique_ptr<JwksSource> source,
                                                    const Clock& clock, VerifierOptions options) {
  return std::make_unique<JwksAuthenticator>(std::move(source), clock, std::move(options));
}

}  // namespace gpuaas::authz
