// Who an S3 request acts for, from its SigV4 Authorization header, its presigned query, or a
// console's "Authorization: Bearer <access token>", and how its body must then be checked.
// Errors are S3 codes (errors.h): AccessDenied (anonymous, expired key, expired URL, bad
// token), InvalidAccessKeyId (unknown or revoked key), SignatureDoesNotMatch,
// RequestTimeTooSkewed, AuthorizationHeaderMalformed, AuthorizationQueryParametersError,
// InvalidRequest, NotImplemented (payload modes we do not speak), ServiceUnavailable.
// A SigV4 request (header or presigned) that carries an x-amz-* header it did not sign (or, when
// presigned, an unsigned Content-MD5) is AccessDenied, as on AWS: otherwise whoever holds a
// presigned PUT could add x-amz-copy-source and copy any key of the bucket onto it.
// An expired accessor is AccessDenied ("The access key has expired"), not ExpiredToken:
// ExpiredToken tells AWS SDKs to refresh session credentials, which an accessor has not.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "libs/authz/principal.h"
#include "libs/authz/storage_access.h"
#include "libs/authz/verifier.h"
#include "libs/common/clock.h"
#include "services/storage/s3/directory.h"
#include "services/storage/s3/sigv4.h"

namespace gpuaas::storage::s3 {

// Exactly one of grant and principal is set.
struct Caller {
  std::optional<authz::StorageGrant> grant;   // an accessor key
  std::optional<authz::Principal> principal;  // an access token
  std::string name;                           // access key id or user id, for logs
};

// How the request body must be verified while it streams in.
struct PayloadCheck {
  // kStreamingUnsigned: aws-chunked without chunk signatures, with trailers.
  enum class Kind { kNone, kSha256, kStreaming, kStreamingUnsigned };
  Kind kind = Kind::kNone;
  std::string sha256_hex;  // kSha256: lower case
  // kStreaming: the chunk-signature chain's start.
  std::string signing_key;
  std::string amz_date;
  std::string scope;
  std::string seed_signature;
};

struct Authenticated {
  Caller caller;
  PayloadCheck payload;
};

// The parts of a request authentication reads.
struct AuthInput {
  std::string_view method;
  std::string_view decoded_path;
  const QueryParams* query = nullptr;
  // All values of a header (name in lower case), in order; empty when absent.
  std::function<std::vector<std::string>(std::string_view)> header_values;
  // The name of every header sent, in any case, repeats allowed.
  std::vector<std::string> header_names;
};

class RequestAuthenticator final {
 public:
  RequestAuthenticator(Directory& directory, authz::Authenticator& tokens, const Clock& clock,
                       std::string region, absl::Duration max_clock_skew);

  // Blocks on the Directory (and, for tokens, at most one JWKS fetch).
  absl::StatusOr<Authenticated> Authenticate(const AuthInput& in) const;

 private:
  absl::StatusOr<Authenticated> FromBearer(const AuthInput& in, std::string_view header) const;
  absl::StatusOr<Authenticated> FromHeader(const AuthInput& in, std::string_view header) const;
  absl::StatusOr<Authenticated> FromQuery(const AuthInput& in) const;
  // Checks the claim's scope and signature against the key's secret; returns the caller and
  // the signing key.
  absl::StatusOr<Authenticated> Verify(const AuthInput& in, const SignatureClaim& claim,
                                       std::string_view payload_hash, bool presigned) const;

  Directory& directory_;
  authz::Authenticator& tokens_;
  const Clock& clock_;
  std::string region_;
  absl::Duration max_clock_skew_;
};

}  // namespace gpuaas::storage::s3
