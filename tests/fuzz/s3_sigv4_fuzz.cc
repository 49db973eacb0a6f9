// S3 request heads as anyone on the network sends them to the storage service's S3 endpoint:
// the target split into bucket, key and query (as the dispatcher does), the operation routed,
// then authenticated: SigV4 in the Authorization header, SigV4 presigned in the query, or a
// Bearer access token (services/storage/s3/auth.h, sigv4.h, operation.h). No crash, no UB.
//
// Input: "METHOD TARGET HTTP/1.1" then "Name: value" lines (LF or CRLF), up to a blank line.
// The directory holds AWS's documented example key, and the clock stands at its examples'
// date, so the seeds (AWS's own signed examples) pass the signature check and the mutations
// start from requests that authenticate.
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/strip.h"
#include "absl/time/civil_time.h"
#include "libs/authz/jwt.h"
#include "libs/authz/verifier.h"
#include "libs/http/http_message.h"
#include "services/storage/s3/auth.h"
#include "services/storage/s3/object_key_form.h"
#include "services/storage/s3/operation.h"
#include "tests/fuzz/fuzz_input.h"

namespace gpuaas::storage::s3 {
namespace {

constexpr std::string_view kAccessKeyId = "AKIAIOSFODNN7EXAMPLE";
constexpr std::string_view kSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
constexpr std::string_view kTokenKid = "fuzz-key";

class ExampleDirectory final : public Directory {
 public:
  absl::StatusOr<AccessKey> FindAccessKey(std::string_view access_key_id) override {
    if (access_key_id != kAccessKeyId) {
      return absl::NotFoundError("no such key");
    }
    return AccessKey{.access_key_id = std::string(kAccessKeyId),
                     .secret_key = std::string(kSecret),
                     .grant = {.storage_id = "examplebucket", .tenant_id = "t-example"}};
  }
  absl::StatusOr<Bucket> FindBucket(std::string_view) override {
    return absl::NotFoundError("no such bucket");
  }
  absl::StatusOr<std::vector<Bucket>> ListBuckets(std::string_view) override {
    return std::vector<Bucket>();
  }
};

// The JWKS of one fixed Ed25519 key (private key: 32 bytes of 0x01).
class FixedJwks final : public authz::JwksSource {
 public:
  absl::StatusOr<std::string> FetchJwks() override {
    auto key = authz::Ed25519Key::FromPrivateRaw(std::string(32, '\x01'));
    if (!key.ok()) {
      return key.status();
    }
    return authz::JwksJson({{.kid = std::string(kTokenKid), .public_raw = key->PublicRaw()}});
  }
};

struct Fixture {
  FakeClock clock{absl::FromCivil(absl::CivilSecond(2013, 5, 24, 0, 0, 0), absl::UTCTimeZone())};
  ExampleDirectory directory;
  std::unique_ptr<authz::Authenticator> tokens =
      authz::NewJwksAuthenticator(std::make_unique<FixedJwks>(), clock);
  RequestAuthenticator authenticator{directory, *tokens, clock, "us-east-1", absl::Minutes(15)};
};

struct Head {
  std::string method;
  std::string target;
  http::Headers headers;
};

// The request head as Beast hands it to the transport (leniently: this is the harness).
Head ParseHead(std::string_view text) {
  Head head;
  std::vector<std::string_view> lines = fuzz::Fields(text, '\n', 256);
  std::vector<std::string_view> start =
      fuzz::Fields(fuzz::Sv(absl::StripSuffix(fuzz::Av(lines[0]), "\r")), ' ', 3);
  head.method = std::string(start[0]);
  head.target = std::string(fuzz::FieldOr(start, 1));
  for (size_t i = 1; i < lines.size(); ++i) {
    std::string_view line = fuzz::Sv(absl::StripSuffix(fuzz::Av(lines[i]), "\r"));
    if (line.empty()) {
      break;
    }
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) {
      continue;
    }
    head.headers.emplace(std::string(line.substr(0, colon)),
                         std::string(absl::StripAsciiWhitespace(fuzz::Av(line.substr(colon + 1)))));
  }
  return head;
}

}  // namespace
}  // namespace gpuaas::storage::s3

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpuaas::storage::s3;
  static Fixture* fixture = new Fixture();
  Head head = ParseHead(gpuaas::fuzz::AsText(data, size));

  // The dispatcher's ParseTarget: path and query decoded, "/bucket/key" split, the key checked.
  std::string_view target = head.target;
  size_t question = target.find('?');
  auto path = UriDecode(target.substr(0, question), false);
  auto query = ParseQuery(question == std::string_view::npos ? std::string_view()
                                                             : target.substr(question + 1));
  if (!path.ok() || path->empty() || (*path)[0] != '/' || !query.ok()) {
    return 0;
  }
  std::string_view rest = std::string_view(*path).substr(1);
  size_t slash = rest.find('/');
  std::string_view bucket = rest.substr(0, slash);
  std::string_view key = slash == std::string_view::npos ? "" : rest.substr(slash + 1);
  if (!key.empty() && !CheckObjectKey(key).ok()) {
    return 0;
  }
  Operation op = Route(head.method, !bucket.empty(), !key.empty(), *query,
                       head.headers.count("x-amz-copy-source") > 0);
  (void)OperationName(op);

  AuthInput in;
  in.method = head.method;
  in.decoded_path = *path;
  in.query = &*query;
  in.header_values = [&head](std::string_view name) {
    std::vector<std::string> values;
    auto [begin, end] = head.headers.equal_range(std::string(name));
    for (auto it = begin; it != end; ++it) {
      values.push_back(it->second);
    }
    return values;
  };
  for (const auto& [name, value] : head.headers) {
    in.header_names.push_back(name);
  }
  auto auth = fixture->authenticator.Authenticate(in);
  if (auth.ok() && auth->caller.grant.has_value() == auth->caller.principal.has_value()) {
    gpuaas::fuzz::Fail("an authenticated caller must be a key or a token, exactly one");
  }
  return 0;
}
