#include "services/storage/s3/auth.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "services/storage/s3/errors.h"
#include "services/storage/s3/internal/views.h"

namespace gpuaas::storage::s3 {
namespace {

std::string First(const AuthInput& in, std::string_view name) {
  std::vector<std::string> values = in.header_values(name);
  return values.empty() ? std::string() : values.front();
}

bool HasParam(const QueryParams& query, std::string_view name) {
  for (const auto& [key, value] : query) {
    if (key == name) {
      return true;
    }
  }
  return false;
}

const std::string* Param(const QueryParams& query, std::string_view name) {
  for (const auto& [key, value] : query) {
    if (key == name) {
      return &value;
    }
  }
  return nullptr;
}

// The first header the signature does not cover but must: every x-amz-* header and, on a
// presigned URL, Content-MD5 (AWS's rule; a header-signed request may leave Content-MD5
// unsigned, since the body is checked against it anyway). A presigned URL's canonical payload
// comes from its query, so an unsigned x-amz-content-sha256 header there changes nothing and is
// let through, as AWS and MinIO do. "" when there is none.
std::string UnsignedHeader(const AuthInput& in, const SignatureClaim& claim, bool presigned) {
  for (const std::string& sent : in.header_names) {
    std::string name = absl::AsciiStrToLower(sent);
    bool must_sign = absl::StartsWith(name, "x-amz-") || (presigned && name == "content-md5");
    if (presigned && name == "x-amz-content-sha256") {
      must_sign = false;
    }
    if (must_sign && std::find(claim.signed_headers.begin(), claim.signed_headers.end(), name) ==
                         claim.signed_headers.end()) {
      return name;
    }
  }
  return "";
}

}  // namespace

RequestAuthenticator::RequestAuthenticator(Directory& directory, authz::Authenticator& tokens,
                                           const Clock& clock, std::string region,
                                           absl::Duration max_clock_skew)
    : directory_(directory),
      tokens_(tokens),
      clock_(clock),
      region_(std::move(region)),
      max_clock_skew_(max_clock_skew) {}

absl::StatusOr<Authenticated> RequestAuthenticator::Authenticate(const AuthInput& in) const {
  std::string header = First(in, "authorization");
  bool presigned = HasParam(*in.query, "X-Amz-Signature") ||
                   HasParam(*in.query, "X-Amz-Credential") ||
                   HasParam(*in.query, "X-Amz-Algorithm");
  if (!header.empty() && presigned) {
    return S3Status("InvalidArgument", "Only one auth mechanism allowed");
  }
  if (presigned) {
    return FromQuery(in);
  }
  if (header.empty()) {
    if (HasParam(*in.query, "AWSAccessKeyId") || HasParam(*in.query, "Signature")) {
      return S3Status("AccessDenied", "Signature Version 2 is not supported; use SigV4");
    }
    return S3Status("AccessDenied", "Anonymous access is forbidden");
  }
  if (absl::StartsWithIgnoreCase(header, "Bearer ")) {
    return FromBearer(in, header);
  }
  if (absl::StartsWith(header, Av(kSigV4Algorithm))) {
    return FromHeader(in, header);
  }
  if (absl::StartsWith(header, "AWS ")) {
    return S3Status("AccessDenied", "Signature Version 2 is not supported; use SigV4");
  }
  return S3Status("AuthorizationHeaderMalformed", "unsupported Authorization scheme");
}

absl::StatusOr<Authenticated> RequestAuthenticator::FromBearer(const AuthInput& in,
                                                               std::string_view header) const {
  auto principal = tokens_.Authenticate(header);
  if (!principal.ok()) {
    if (principal.status().code() == absl::StatusCode::kUnavailable) {
      return S3Status("ServiceUnavailable", "token keys are unavailable; retry");
    }
    return S3Status("AccessDenied", "The access token is invalid or expired");
  }
  Authenticated auth;
  auth.caller.name = principal->user_id;
  auth.caller.principal = *std::move(principal);
  std::string hash = absl::AsciiStrToLower(First(in, "x-amz-content-sha256"));
  if (IsSha256Hex(hash)) {
    auth.payload.kind = PayloadCheck::Kind::kSha256;
    auth.payload.sha256_hex = hash;
  }
  return auth;
}

absl::StatusOr<Authenticated> RequestAuthenticator::FromHeader(const AuthInput& in,
                                                               std::string_view header) const {
  auto claim = ParseAuthorizationHeader(header);
  if (!claim.ok()) {
    return S3Status("AuthorizationHeaderMalformed", claim.status().message());
  }
  claim->amz_date = First(in, "x-amz-date");
  if (claim->amz_date.empty()) {
    return S3Status("AccessDenied", "AWS authentication requires a valid X-Amz-Date header");
  }
  std::string payload_hash = First(in, "x-amz-content-sha256");
  if (payload_hash.empty()) {
    return S3Status("InvalidRequest",
                    "Missing required header for this request: x-amz-content-sha256");
  }
  PayloadCheck check;
  if (payload_hash == kStreamingPayload) {
    check.kind = PayloadCheck::Kind::kStreaming;
  } else if (payload_hash == kStreamingUnsignedTrailer) {
    check.kind = PayloadCheck::Kind::kStreamingUnsigned;
  } else if (payload_hash == kUnsignedPayload) {
    check.kind = PayloadCheck::Kind::kNone;
  } else if (IsSha256Hex(payload_hash)) {
    check.kind = PayloadCheck::Kind::kSha256;
    check.sha256_hex = absl::AsciiStrToLower(payload_hash);
  } else if (absl::StartsWith(payload_hash, "STREAMING-")) {
    return S3Status("NotImplemented", absl::StrCat(payload_hash, " is not supported"));
  } else {
    return S3Status("InvalidArgument", "x-amz-content-sha256 must be a SHA-256 in hex");
  }
  auto auth = Verify(in, *claim, payload_hash, /*presigned=*/false);
  if (!auth.ok()) {
    return auth.status();
  }
  if (check.kind == PayloadCheck::Kind::kStreaming) {
    check.signing_key = std::move(auth->payload.signing_key);
    check.amz_date = claim->amz_date;
    check.scope = claim->credential.Scope();
    check.seed_signature = claim->signature;
  }
  auth->payload = std::move(check);
  return auth;
}

absl::StatusOr<Authenticated> RequestAuthenticator::FromQuery(const AuthInput& in) const {
  auto claim = ParsePresignedQuery(*in.query);
  if (!claim.ok()) {
    return S3Status("AuthorizationQueryParametersError", claim.status().message());
  }
  const std::string* hash = Param(*in.query, "X-Amz-Content-Sha256");
  std::string payload_hash = hash != nullptr ? *hash : std::string(kUnsignedPayload);
  auto auth = Verify(in, *claim, payload_hash, /*presigned=*/true);
  if (!auth.ok()) {
    return auth.status();
  }
  auth->payload = PayloadCheck{};
  if (IsSha256Hex(payload_hash)) {
    auth->payload.kind = PayloadCheck::Kind::kSha256;
    auth->payload.sha256_hex = absl::AsciiStrToLower(payload_hash);
  }
  return auth;
}

absl::StatusOr<Authenticated> RequestAuthenticator::Verify(const AuthInput& in,
                                                           const SignatureClaim& claim,
                                                           std::string_view payload_hash,
                                                           bool presigned) const {
  std::string_view malformed =
      presigned ? "AuthorizationQueryParametersError" : "AuthorizationHeaderMalformed";
  auto signed_at = ParseAmzDate(claim.amz_date);
  if (!signed_at.ok()) {
    return S3Status(presigned ? malformed : "AccessDenied", signed_at.status().message());
  }
  if (claim.credential.date != claim.amz_date.substr(0, 8)) {
    return S3Status(malformed, "the credential date does not match X-Amz-Date");
  }
  if (claim.credential.region != region_) {
    return S3Status(malformed, absl::StrCat("the region '", claim.credential.region,
                                            "' is wrong; expecting '", region_, "'"));
  }
  if (claim.credential.service != "s3") {
    return S3Status(malformed, "the credential's service must be s3");
  }
  if (std::string name = UnsignedHeader(in, claim, presigned); !name.empty()) {
    return S3Status("AccessDenied",
                    absl::StrCat("There were headers present in the request which were not "
                                 "signed: ",
                                 name));
  }
  absl::Time now = clock_.Now();
  if (presigned) {
    if (now > *signed_at + claim.expires) {
      return S3Status("AccessDenied", "Request has expired");
    }
    if (*signed_at - now > max_clock_skew_) {
      return S3Status("AccessDenied", "Request is not valid yet");
    }
  } else if (absl::AbsDuration(now - *signed_at) > max_clock_skew_) {
    return S3Status("RequestTimeTooSkewed",
                    "The difference between the request time and the server's time is too "
                    "large.");
  }

  auto key = directory_.FindAccessKey(claim.credential.access_key_id);
  if (!key.ok()) {
    if (key.status().code() == absl::StatusCode::kNotFound) {
      return S3Status("InvalidAccessKeyId",
                      "The AWS Access Key Id you provided does not exist in our records.");
    }
    // UNKNOWN/ABORTED: the directory's database failed over under the lookup (commit in doubt,
    // conflict left after retries); a read, so a retry is safe.
    if (key.status().code() == absl::StatusCode::kUnavailable ||
        key.status().code() == absl::StatusCode::kDeadlineExceeded ||
        key.status().code() == absl::StatusCode::kUnknown ||
        key.status().code() == absl::StatusCode::kAborted) {
      return S3Status("ServiceUnavailable", "the key directory is unavailable; retry");
    }
    return key.status();  // InternalError for the client; the dispatcher logs the detail
  }

  CanonicalInput canonical;
  canonical.method = in.method;
  canonical.decoded_path = in.decoded_path;
  canonical.query = in.query;
  canonical.payload_hash = payload_hash;
  canonical.skip_signature_param = presigned;
  for (const auto& name : claim.signed_headers) {
    canonical.headers.emplace_back(name, CanonicalHeaderValue(in.header_values(name)));
  }
  std::string string_to_sign =
      StringToSign(claim.amz_date, claim.credential.Scope(), CanonicalRequest(canonical));
  std::string signing_key = SigningKey(key->secret_key, claim.credential);
  if (!ConstantTimeEquals(Sign(signing_key, string_to_sign), claim.signature)) {
    return S3Status("SignatureDoesNotMatch",
                    "The request signature we calculated does not match the signature you "
                    "provided. Check your key and signing method.");
  }
  // Checked after the signature, so only the key's holder learns that it expired.
  if (now >= key->expire_time) {
    return S3Status("AccessDenied", "The access key has expired");
  }
  Authenticated auth;
  auth.caller.grant = key->grant;
  auth.caller.name = key->access_key_id;
  auth.payload.signing_key = std::move(signing_key);
  return auth;
}

}  // namespace gpuaas::storage::s3
