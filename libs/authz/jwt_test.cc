#include "libs/authz/jwt.h"

#include <gtest/gtest.h>

#include <map>

#include "libs/common/base64url.h"

namespace gpuaas::authz {
namespace {

using ::gpuaas::common::v1::ROLE_ACCESS_PROXY;
using ::gpuaas::common::v1::ROLE_NODE_AGENT;
using ::gpuaas::common::v1::ROLE_PLATFORM_ADMIN;
using ::gpuaas::common::v1::ROLE_TENANT_ADMIN;

constexpr std::string_view kIssuer = "gpuaas-auth";
const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

class MapKeys final : public KeyLookup {
 public:
  void Add(std::string kid, Ed25519Key key) {
    keys_.insert_or_assign(std::move(kid), std::move(key));
  }
  const Ed25519Key* Find(std::string_view kid) const override {
    auto it = keys_.find(std::string(kid));
    return it == keys_.end() ? nullptr : &it->second;
  }

 private:
  std::map<std::string, Ed25519Key> keys_;
};

Claims SampleClaims() {
  Claims c;
  c.kid = "k1";
  c.iss = std::string(kIssuer);
  c.sub = "usr_alice";
  c.tenant = "ten_acme";
  c.role = ROLE_TENANT_ADMIN;
  c.iat = kNow;
  c.exp = kNow + absl::Minutes(15);
  c.jti = "tok_1";
  return c;
}

// Builds a token from raw header and payload JSON, signed by `key` unless a signature is given.
std::string Assemble(std::string_view header, std::string_view payload, const Ed25519Key* key,
                     std::string_view signature = "") {
  std::string input = Base64UrlEncode(header) + "." + Base64UrlEncode(payload);
  std::string sig = key != nullptr ? key->Sign(input) : std::string(signature);
  return input + "." + Base64UrlEncode(sig);
}

class JwtTest : public ::testing::Test {
 protected:
  JwtTest() : signer_(Ed25519Key::Generate()) {
    keys_.Add("k1", *Ed25519Key::FromPublicRaw(signer_.PublicRaw()));
  }

  absl::StatusOr<Claims> Verify(std::string_view token, absl::Time now = kNow) {
    return VerifyJwt(token, keys_, kIssuer, now);
  }

  void ExpectRejected(std::string_view token, std::string_view reason) {
    absl::StatusOr<Claims> got = Verify(token);
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), absl::StatusCode::kUnauthenticated);
    EXPECT_EQ(std::string(got.status().message()), std::string(reason));
  }

  std::string SignedPayload(std::string_view payload) {
    return Assemble(R"({"alg":"EdDSA","typ":"JWT","kid":"k1"})", payload, &signer_);
  }

  Ed25519Key signer_;
  MapKeys keys_;
};

TEST(Base64Url, RoundTripAllLengths) {
  std::string data;
  for (int i = 0; i < 70; ++i) {
    absl::StatusOr<std::string> back = Base64UrlDecode(Base64UrlEncode(data));
    ASSERT_TRUE(back.ok()) << i;
    EXPECT_EQ(*back, data);
    data.push_back(static_cast<char>(i * 37 + 250));
  }
  EXPECT_EQ(Base64UrlEncode("\xfb\xff"), "-_8");
}

TEST(Base64Url, StrictDecoding) {
  EXPECT_FALSE(Base64UrlDecode("YQ==").ok());   // padding
  EXPECT_FALSE(Base64UrlDecode("a+b/").ok());   // standard alphabet
  EXPECT_FALSE(Base64UrlDecode("YW Jj").ok());  // whitespace
  EXPECT_FALSE(Base64UrlDecode("YWJjZ").ok());  // dangling character
  EXPECT_FALSE(Base64UrlDecode("YR").ok());     // non-zero leftover bits
  EXPECT_EQ(*Base64UrlDecode("YQ"), "a");
  EXPECT_EQ(*Base64UrlDecode(""), "");
}

TEST(Ed25519Key, RawRoundTripAndSignVerify) {
  Ed25519Key key = Ed25519Key::Generate();
  ASSERT_TRUE(key.HasPrivate());
  absl::StatusOr<Ed25519Key> again = Ed25519Key::FromPrivateRaw(key.PrivateRaw());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->PublicRaw(), key.PublicRaw());
  absl::StatusOr<Ed25519Key> pub = Ed25519Key::FromPublicRaw(key.PublicRaw());
  ASSERT_TRUE(pub.ok());
  EXPECT_FALSE(pub->HasPrivate());
  EXPECT_EQ(pub->PrivateRaw(), "");

  std::string sig = again->Sign("hello");
  EXPECT_EQ(sig.size(), 64u);
  EXPECT_TRUE(pub->Verify("hello", sig));
  EXPECT_FALSE(pub->Verify("hellO", sig));
  EXPECT_FALSE(pub->Verify("hello", sig.substr(1)));
  EXPECT_FALSE(Ed25519Key::FromPrivateRaw("short").ok());
  EXPECT_FALSE(Ed25519Key::FromPublicRaw(std::string(33, 'x')).ok());
}

TEST_F(JwtTest, RoundTrip) {
  Claims in = SampleClaims();
  in.api_key_id = "akey_1";
  absl::StatusOr<Claims> out = Verify(SignJwt(in, signer_));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->kid, "k1");
  EXPECT_EQ(out->iss, in.iss);
  EXPECT_EQ(out->sub, in.sub);
  EXPECT_EQ(out->tenant, in.tenant);
  EXPECT_EQ(out->role, ROLE_TENANT_ADMIN);
  EXPECT_EQ(out->iat, in.iat);
  EXPECT_EQ(out->exp, in.exp);
  EXPECT_EQ(out->jti, in.jti);
  EXPECT_EQ(out->api_key_id, "akey_1");
}

TEST_F(JwtTest, WireFormat) {
  std::string token = SignJwt(SampleClaims(), signer_);
  std::string header = *Base64UrlDecode(token.substr(0, token.find('.')));
  EXPECT_EQ(header, R"({"alg":"EdDSA","typ":"JWT","kid":"k1"})");
  size_t dot1 = token.find('.');
  std::string payload = *Base64UrlDecode(token.substr(dot1 + 1, token.rfind('.') - dot1 - 1));
  EXPECT_NE(payload.find(R"("role":"TENANT_ADMIN")"), std::string::npos);
  EXPECT_NE(payload.find(R"("exp":1800000900)"), std::string::npos);
  EXPECT_EQ(payload.find("akid"), std::string::npos);
  EXPECT_EQ(token.find('='), std::string::npos);
}

TEST_F(JwtTest, GlobalRoleWithoutTenant) {
  Claims in = SampleClaims();
  in.role = ROLE_PLATFORM_ADMIN;
  in.tenant.clear();
  absl::StatusOr<Claims> out = Verify(SignJwt(in, signer_));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->tenant, "");
}

TEST_F(JwtTest, NodeAgentCarriesItsNodeAndNoTenant) {
  Claims in = SampleClaims();
  in.role = ROLE_NODE_AGENT;
  in.tenant.clear();
  in.node = "node-a";
  absl::StatusOr<Claims> out = Verify(SignJwt(in, signer_));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->node, "node-a");

  in.node.clear();  // a node agent without its node
  ExpectRejected(SignJwt(in, signer_), "invalid token claims");
  in.node = "node-a";
  in.tenant = "ten_a";  // a machine acting in a tenant
  ExpectRejected(SignJwt(in, signer_), "invalid token claims");
  in.role = ROLE_ACCESS_PROXY;  // a node on anything but a node agent
  in.tenant.clear();
  ExpectRejected(SignJwt(in, signer_), "invalid token claims");
}

// A token minted for one call to one node's agent (node_calls.h) verifies only where the
// verifier expects that node's audience; every other token is refused there.
TEST_F(JwtTest, AnAudienceTokenVerifiesOnlyForItsAudience) {
  Claims in = SampleClaims();
  in.role = ::gpuaas::common::v1::ROLE_SERVICE;
  in.tenant.clear();
  in.aud = "node:node-a";
  in.purpose = "read_workload_logs";
  const std::string token = SignJwt(in, signer_);
  absl::StatusOr<Claims> out = VerifyJwt(token, keys_, kIssuer, kNow, absl::Seconds(30), in.aud);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->aud, "node:node-a");
  EXPECT_EQ(out->purpose, "read_workload_logs");
  // Every service verifies without an audience; another agent with its own.
  ExpectRejected(token, "token not meant for this server");
  EXPECT_EQ(
      VerifyJwt(token, keys_, kIssuer, kNow, absl::Seconds(30), "node:node-b").status().message(),
      "token not meant for this server");
  // An agent refuses a token without an audience (a service's own, an admin's).
  EXPECT_EQ(VerifyJwt(SignJwt(SampleClaims(), signer_), keys_, kIssuer, kNow, absl::Seconds(30),
                      "node:node-a")
                .status()
                .message(),
            "token not meant for this server");
  // An audience without a purpose, a purpose without one, a machine role with one.
  in.purpose.clear();
  EXPECT_EQ(VerifyJwt(SignJwt(in, signer_), keys_, kIssuer, kNow, absl::Seconds(30), in.aud)
                .status()
                .message(),
            "invalid token claims");
  in.aud.clear();
  in.purpose = "read_workload_logs";
  ExpectRejected(SignJwt(in, signer_), "invalid token claims");
  in.aud = "node:node-a";
  in.role = ROLE_NODE_AGENT;
  in.node = "node-a";
  EXPECT_EQ(VerifyJwt(SignJwt(in, signer_), keys_, kIssuer, kNow, absl::Seconds(30), in.aud)
                .status()
                .message(),
            "invalid token claims");
  // A list of audiences is not ours.
  EXPECT_EQ(
      VerifyJwt(
          SignedPayload(
              R"({"iss":"gpuaas-auth","sub":"u","role":"SERVICE","aud":["node:node-a"],"purpose":"read_workload_logs","iat":1800000000,"exp":1800000900})"),
          keys_, kIssuer, kNow, absl::Seconds(30), "node:node-a")
          .status()
          .message(),
      "invalid token claims");
}

TEST_F(JwtTest, RejectsExpired) {
  std::string token = SignJwt(SampleClaims(), signer_);
  const absl::Time exp = kNow + absl::Minutes(15);
  EXPECT_TRUE(Verify(token, exp + absl::Seconds(29)).ok());  // inside the 30 s leeway
  absl::StatusOr<Claims> got = Verify(token, exp + absl::Seconds(30));
  EXPECT_EQ(got.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(got.status().message(), "token expired");
}

TEST_F(JwtTest, RejectsFutureIat) {
  Claims c = SampleClaims();
  c.iat = kNow + absl::Seconds(30);
  EXPECT_TRUE(Verify(SignJwt(c, signer_)).ok());  // within leeway
  c.iat = kNow + absl::Seconds(31);
  ExpectRejected(SignJwt(c, signer_), "token not yet valid");
}

TEST_F(JwtTest, RejectsForgedSignature) {
  Ed25519Key other = Ed25519Key::Generate();
  ExpectRejected(SignJwt(SampleClaims(), other), "invalid token signature");

  // A valid signature moved onto a different payload.
  std::string good = SignJwt(SampleClaims(), signer_);
  Claims admin = SampleClaims();
  admin.role = ROLE_PLATFORM_ADMIN;
  std::string forged = SignJwt(admin, other);
  std::string spliced = forged.substr(0, forged.rfind('.')) + good.substr(good.rfind('.'));
  ExpectRejected(spliced, "invalid token signature");
}

TEST_F(JwtTest, RejectsAlgNoneAndHs256) {
  const std::string payload =
      R"({"iss":"gpuaas-auth","sub":"u","tenant":"t","role":"VIEWER","iat":1800000000,"exp":1800000900})";
  ExpectRejected(Assemble(R"({"alg":"none","typ":"JWT","kid":"k1"})", payload, nullptr, ""),
                 "unsupported token algorithm");
  ExpectRejected(Assemble(R"({"alg":"none","kid":"k1"})", payload, nullptr, ""),
                 "unsupported token algorithm");
  // HS256 keyed with the public key: the classic confusion attack.
  ExpectRejected(
      Assemble(R"({"alg":"HS256","typ":"JWT","kid":"k1"})", payload, nullptr, std::string(32, 'x')),
      "unsupported token algorithm");
  ExpectRejected(Assemble(R"({"typ":"JWT","kid":"k1"})", payload, &signer_),
                 "unsupported token algorithm");
  // Even a correct Ed25519 signature does not rescue a header that names another alg.
  ExpectRejected(Assemble(R"({"alg":"EdDSA ","typ":"JWT","kid":"k1"})", payload, &signer_),
                 "unsupported token algorithm");
}

TEST_F(JwtTest, RejectsUnknownKid) {
  Claims c = SampleClaims();
  c.kid = "k2";
  ExpectRejected(SignJwt(c, signer_), "unknown signing key");
}

TEST_F(JwtTest, RejectsWrongIssuer) {
  Claims c = SampleClaims();
  c.iss = "someone-else";
  ExpectRejected(SignJwt(c, signer_), "wrong token issuer");
}

TEST_F(JwtTest, RejectsMalformedStructure) {
  std::string token = SignJwt(SampleClaims(), signer_);
  ExpectRejected("", "malformed token");
  ExpectRejected("abc", "malformed token");
  ExpectRejected("a.b", "malformed token");
  ExpectRejected(token + ".x", "malformed token");
  ExpectRejected(token + ".", "malformed token");
  ExpectRejected(std::string(9000, 'a'), "malformed token");
}

TEST_F(JwtTest, RejectsBadBase64) {
  std::string token = SignJwt(SampleClaims(), signer_);
  size_t dot1 = token.find('.');
  size_t dot2 = token.rfind('.');
  std::string bad_header = "e+" + token.substr(2);
  ExpectRejected(bad_header, "malformed token");
  std::string bad_sig = token.substr(0, dot2 + 1) + "!!" + token.substr(dot2 + 3);
  ExpectRejected(bad_sig, "malformed token");
  std::string padded_sig = token + "==";
  ExpectRejected(padded_sig, "malformed token");
  std::string bad_payload = token.substr(0, dot1 + 1) + "*" + token.substr(dot1 + 2);
  // The signature covers the payload's text, so it fails before the payload is decoded.
  ExpectRejected(bad_payload, "invalid token signature");
}

TEST_F(JwtTest, RejectsNonObjectJson) {
  const std::string header = R"({"alg":"EdDSA","typ":"JWT","kid":"k1"})";
  ExpectRejected(Assemble("[1,2]", "{}", &signer_), "malformed token");
  ExpectRejected(Assemble("not json", "{}", &signer_), "malformed token");
  ExpectRejected(Assemble(header, "[]", &signer_), "malformed token");
  ExpectRejected(Assemble(header, "\"str\"", &signer_), "malformed token");
  ExpectRejected(Assemble(header, "{\"iss\":", &signer_), "malformed token");
  ExpectRejected(Assemble(R"({"alg":"EdDSA","kid":"k1","crit":["x"]})", "{}", &signer_),
                 "malformed token");
  ExpectRejected(Assemble(R"({"alg":"EdDSA","kid":7})", "{}", &signer_), "malformed token");
}

TEST_F(JwtTest, RejectsBadClaims) {
  const char* kBad[] = {
      // missing sub
      R"({"iss":"gpuaas-auth","tenant":"t","role":"VIEWER","iat":1800000000,"exp":1800000900})",
      // missing exp
      R"({"iss":"gpuaas-auth","sub":"u","tenant":"t","role":"VIEWER","iat":1800000000})",
      // missing iat
      R"({"iss":"gpuaas-auth","sub":"u","tenant":"t","role":"VIEWER","exp":1800000900})",
      // unknown role, lower-case role, unspecified role, missing role
      R"({"iss":"gpuaas-auth","sub":"u","tenant":"t","role":"ROOT","iat":1800000000,"exp":1800000900})",
      R"({"iss":"gpuaas-auth","sub":"u","tenant":"t","role":"viewer","iat":1800000000,"exp":1800000900})",
      R"({"iss":"gpuaas-auth","sub":"u","tenant":"t","role":"ROLE_UNSPECIFIED","iat":1800000000,"exp":1800000900})",
      R"({"iss":"gpuaas-auth","sub":"u","tenant":"t","iat":1800000000,"exp":1800000900})",
      // wrong types
      R"({"iss":"gpuaas-auth","sub":5,"tenant":"t","role":"VIEWER","iat":1800000000,"exp":1800000900})",
      R"({"iss":"gpuaas-auth","sub":"u","tenant":"t","role":"VIEWER","iat":1800000000,"exp":"1800000900"})",
      R"({"iss":"gpuaas-auth","sub":"u","tenant":"t","role":"VIEWER","iat":1800000000,"exp":1800000900.5})",
      R"({"iss":"gpuaas-auth","sub":"u","tenant":"t","role":"VIEWER","iat":1800000000,"exp":18446744073709551615})",
      R"({"iss":"gpuaas-auth","sub":"u","tenant":["t"],"role":"VIEWER","iat":1800000000,"exp":1800000900})",
      // a tenant role without a tenant
      R"({"iss":"gpuaas-auth","sub":"u","role":"VIEWER","iat":1800000000,"exp":1800000900})",
  };
  for (const char* payload : kBad) {
    absl::StatusOr<Claims> got = Verify(SignedPayload(payload));
    EXPECT_EQ(got.status().code(), absl::StatusCode::kUnauthenticated) << payload;
    EXPECT_EQ(got.status().message(), "invalid token claims") << payload;
  }
  EXPECT_TRUE(
      Verify(
          SignedPayload(
              R"({"iss":"gpuaas-auth","sub":"u","tenant":"t","role":"VIEWER","iat":1800000000,"exp":1800000900})"))
          .ok());
}

TEST_F(JwtTest, ErrorsNeverEchoTheToken) {
  Claims c = SampleClaims();
  c.sub = "secret-subject-value";
  c.iss = "wrong";
  absl::StatusOr<Claims> got = Verify(SignJwt(c, signer_));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().message().find("secret"), std::string::npos);
  EXPECT_LT(got.status().message().size(), 40u);
}

TEST(Jwks, RoundTrip) {
  Ed25519Key a = Ed25519Key::Generate();
  Ed25519Key b = Ed25519Key::Generate();
  std::vector<PublicJwk> keys = {{"ka", a.PublicRaw()}, {"kb", b.PublicRaw()}};
  std::string json = JwksJson(keys);
  EXPECT_NE(json.find(R"("kty":"OKP","crv":"Ed25519")"), std::string::npos);
  EXPECT_NE(json.find(R"("alg":"EdDSA","use":"sig")"), std::string::npos);
  absl::StatusOr<std::vector<PublicJwk>> back = ParseJwksJson(json);
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->size(), 2u);
  EXPECT_EQ((*back)[0].kid, "ka");
  EXPECT_EQ((*back)[0].public_raw, a.PublicRaw());
  EXPECT_EQ((*back)[1].kid, "kb");
  EXPECT_EQ((*back)[1].public_raw, b.PublicRaw());
  EXPECT_EQ(JwksJson({}), R"({"keys":[]})");
  EXPECT_TRUE(ParseJwksJson(R"({"keys":[]})")->empty());
}

TEST(Jwks, SkipsForeignKeyTypes) {
  Ed25519Key a = Ed25519Key::Generate();
  std::string x = Base64UrlEncode(a.PublicRaw());
  std::string json = R"({"keys":[{"kty":"RSA","kid":"r","n":"AQAB","e":"AQAB"},)"
                     R"({"kty":"OKP","crv":"X25519","kid":"x","x":")" +
                     x +
                     R"("},)"
                     R"({"kty":"OKP","crv":"Ed25519","kid":"enc","use":"enc","x":")" +
                     x +
                     R"("},)"
                     R"({"kty":"OKP","crv":"Ed25519","kid":"good","x":")" +
                     x + R"("}]})";
  absl::StatusOr<std::vector<PublicJwk>> got = ParseJwksJson(json);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ((*got)[0].kid, "good");
}

TEST(Jwks, RejectsMalformed) {
  std::string x = Base64UrlEncode(Ed25519Key::Generate().PublicRaw());
  const std::string kBad[] = {
      "",
      "[]",
      "{}",
      R"({"keys":{}})",
      R"({"keys":[1]})",
      R"({"keys":[{"kty":"OKP","crv":"Ed25519","x":")" + x + R"("}]})",             // no kid
      R"({"keys":[{"kty":"OKP","crv":"Ed25519","kid":"k"}]})",                      // no x
      R"({"keys":[{"kty":"OKP","crv":"Ed25519","kid":"k","x":"AAAA"}]})",           // short x
      R"({"keys":[{"kty":"OKP","crv":"Ed25519","kid":"k","x":")" + x + R"(="}]})",  // padded x
      R"({"keys":[{"kty":"OKP","crv":"Ed25519","kid":"k","x":")" + x +
          R"("},{"kty":"OKP","crv":"Ed25519","kid":"k","x":")" + x + R"("}]})",  // duplicate
  };
  for (const std::string& json : kBad) {
    EXPECT_EQ(ParseJwksJson(json).status().code(), absl::StatusCode::kInvalidArgument) << json;
  }
}

}  // namespace
}  // namespace gpuaas::authz
