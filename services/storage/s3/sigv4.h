// AWS Signature Version 4 as S3 uses it: the canonical request, the signing key, the
// Authorization header and presigned-URL (query) forms, and the chain of chunk signatures of a
// STREAMING-AWS4-HMAC-SHA256-PAYLOAD body. Pure functions over strings; no I/O, no clock.
// https://docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-authenticating-requests.html
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace gpuaas::storage::s3 {

inline constexpr std::string_view kSigV4Algorithm = "AWS4-HMAC-SHA256";
inline constexpr std::string_view kUnsignedPayload = "UNSIGNED-PAYLOAD";
inline constexpr std::string_view kStreamingPayload = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD";
inline constexpr std::string_view kStreamingUnsignedTrailer = "STREAMING-UNSIGNED-PAYLOAD-TRAILER";
inline constexpr std::string_view kEmptySha256 =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
// Presigned URLs live at most a week, as on AWS.
inline constexpr absl::Duration kMaxPresignedExpiry = absl::Hours(24 * 7);

// AWS's UriEncode: A-Z a-z 0-9 - . _ ~ kept, every other byte as %XX (upper case); '/' kept
// unless `encode_slash`.
std::string UriEncode(std::string_view text, bool encode_slash);
// Percent-decoding; '+' becomes a space only when `plus_is_space` (query strings).
// INVALID_ARGUMENT on a malformed escape.
absl::StatusOr<std::string> UriDecode(std::string_view text, bool plus_is_space);

// A query string split into decoded (name, value) pairs, in the order sent.
using QueryParams = std::vector<std::pair<std::string, std::string>>;
absl::StatusOr<QueryParams> ParseQuery(std::string_view raw_query);

// "<date>/<region>/<service>/aws4_request" and the access key before it.
struct Credential {
  std::string access_key_id;
  std::string date;  // YYYYMMDD
  std::string region;
  std::string service;
  std::string Scope() const;
};

// What a signed request claims, from its Authorization header or its X-Amz-* query parameters.
struct SignatureClaim {
  Credential credential;
  std::vector<std::string> signed_headers;  // lower case, as listed (sorted by the client)
  std::string signature;                    // 64 lower-case hex digits
  std::string amz_date;                     // X-Amz-Date: YYYYMMDDTHHMMSSZ
  absl::Duration expires;                   // presigned only
};

// "AWS4-HMAC-SHA256 Credential=..., SignedHeaders=..., Signature=...". INVALID_ARGUMENT when
// malformed.
absl::StatusOr<SignatureClaim> ParseAuthorizationHeader(std::string_view value);
// The X-Amz-Algorithm/Credential/Date/Expires/SignedHeaders/Signature query parameters.
// X-Amz-Date is taken from the query. INVALID_ARGUMENT when one is missing or malformed,
// or X-Amz-Expires is outside 1 s .. 7 days.
absl::StatusOr<SignatureClaim> ParsePresignedQuery(const QueryParams& query);

// "20130524T000000Z". INVALID_ARGUMENT otherwise.
absl::StatusOr<absl::Time> ParseAmzDate(std::string_view text);

// The parts of a request the canonical request is built from.
struct CanonicalInput {
  std::string_view method;
  std::string_view decoded_path;  // "/bucket/key", percent-decoded
  const QueryParams* query = nullptr;
  // Signed header names (lower case) with their values joined the way HTTP allows ("a,b").
  std::vector<std::pair<std::string, std::string>> headers;
  std::string_view payload_hash;
  // Dropped from the canonical query string (a presigned URL's own signature).
  bool skip_signature_param = false;
};

// A header's values as the canonical request holds them: each trimmed, runs of spaces
// collapsed, joined with ','.
std::string CanonicalHeaderValue(const std::vector<std::string>& values);

std::string CanonicalRequest(const CanonicalInput& in);
std::string StringToSign(std::string_view amz_date, std::string_view scope,
                         std::string_view canonical_request);
// The 32-byte key: HMAC chain over "AWS4"+secret, date, region, service, "aws4_request".
std::string SigningKey(std::string_view secret, const Credential& credential);
// Lower-case hex HMAC-SHA256 of `string_to_sign` under `signing_key`.
std::string Sign(std::string_view signing_key, std::string_view string_to_sign);
// The string a chunk signature signs: it chains to the previous chunk's (or the seed's).
std::string ChunkStringToSign(std::string_view amz_date, std::string_view scope,
                              std::string_view previous_signature,
                              std::string_view chunk_sha256_hex);

std::string Sha256Hex(std::string_view data);
std::string HexEncode(std::string_view bytes);
// The value of one hex digit (either case); -1 for any other character.
int HexValue(char c);
// Compares without an early exit, so a forger learns nothing from timing.
bool ConstantTimeEquals(std::string_view a, std::string_view b);
// 64 lower- or upper-case hex digits.
bool IsSha256Hex(std::string_view text);

}  // namespace gpuaas::storage::s3
