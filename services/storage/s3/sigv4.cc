#include "services/storage/s3/sigv4.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/civil_time.h"
#include "services/storage/s3/internal/views.h"

namespace gpuaas::storage::s3 {
namespace {

constexpr char kHexUpper[] = "0123456789ABCDEF";
constexpr char kHexLower[] = "0123456789abcdef";

bool IsUnreserved(unsigned char c) {
  return absl::ascii_isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

std::string Hmac(std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &len);
  return std::string(reinterpret_cast<char*>(out), len);
}

// "Credential=AKID/20130524/us-east-1/s3/aws4_request"'s value.
absl::StatusOr<Credential> ParseCredential(std::string_view text) {
  std::vector<std::string> parts = absl::StrSplit(Av(text), '/');
  if (parts.size() != 5 || parts[0].empty() || parts[1].size() != 8 || parts[2].empty() ||
      parts[3].empty() || parts[4] != "aws4_request") {
    return absl::InvalidArgumentError("malformed credential scope");
  }
  return Credential{parts[0], parts[1], parts[2], parts[3]};
}

absl::StatusOr<std::vector<std::string>> ParseSignedHeaders(std::string_view text) {
  std::vector<std::string> names = absl::StrSplit(Av(text), ';');
  for (const auto& name : names) {
    if (name.empty() || name != absl::AsciiStrToLower(name)) {
      return absl::InvalidArgumentError("malformed SignedHeaders");
    }
  }
  if (std::find(names.begin(), names.end(), "host") == names.end()) {
    return absl::InvalidArgumentError("SignedHeaders must include host");
  }
  return names;
}

bool IsLowerHex64(std::string_view text) {
  return text.size() == 64 && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

}  // namespace

int HexValue(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  if (c >= 'A' && c <= 'F') {
    return c - 'A' + 10;
  }
  return -1;
}

std::string UriEncode(std::string_view text, bool encode_slash) {
  std::string out;
  out.reserve(text.size() * 3 / 2);
  for (unsigned char c : text) {
    if (IsUnreserved(c) || (c == '/' && !encode_slash)) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHexUpper[c >> 4]);
      out.push_back(kHexUpper[c & 15]);
    }
  }
  return out;
}

absl::StatusOr<std::string> UriDecode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '%') {
      int hi = i + 2 < text.size() ? HexValue(text[i + 1]) : -1;
      int lo = i + 2 < text.size() ? HexValue(text[i + 2]) : -1;
      if (hi < 0 || lo < 0) {
        return absl::InvalidArgumentError("malformed percent-encoding");
      }
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

absl::StatusOr<QueryParams> ParseQuery(std::string_view raw_query) {
  QueryParams params;
  if (raw_query.empty()) {
    return params;
  }
  for (absl::string_view item_view : absl::StrSplit(Av(raw_query), '&')) {
    std::string_view item = Sv(item_view);
    if (item.empty()) {
      continue;
    }
    size_t eq = item.find('=');
    std::string_view raw_name = item.substr(0, eq);
    std::string_view raw_value = eq == std::string_view::npos ? "" : item.substr(eq + 1);
    auto name = UriDecode(raw_name, true);
    auto value = UriDecode(raw_value, true);
    if (!name.ok() || !value.ok()) {
      return absl::InvalidArgumentError("query: malformed percent-encoding");
    }
    params.emplace_back(*std::move(name), *std::move(value));
  }
  return params;
}

std::string Credential::Scope() const {
  return date + "/" + region + "/" + service + "/aws4_request";
}

absl::StatusOr<SignatureClaim> ParseAuthorizationHeader(std::string_view value) {
  if (value.substr(0, kSigV4Algorithm.size()) != kSigV4Algorithm ||
      value.size() == kSigV4Algorithm.size() || value[kSigV4Algorithm.size()] != ' ') {
    return absl::InvalidArgumentError("Authorization: only AWS4-HMAC-SHA256 is supported");
  }
  value.remove_prefix(kSigV4Algorithm.size());
  SignatureClaim claim;
  bool have_credential = false, have_headers = false, have_signature = false;
  for (absl::string_view piece : absl::StrSplit(Av(value), ',')) {
    std::string_view part = Sv(absl::StripAsciiWhitespace(piece));
    size_t eq = part.find('=');
    if (eq == std::string_view::npos) {
      return absl::InvalidArgumentError("Authorization: malformed");
    }
    std::string_view name = part.substr(0, eq);
    std::string_view field = part.substr(eq + 1);
    if (name == "Credential") {
      auto credential = ParseCredential(field);
      if (!credential.ok()) {
        return credential.status();
      }
      claim.credential = *std::move(credential);
      have_credential = true;
    } else if (name == "SignedHeaders") {
      auto headers = ParseSignedHeaders(field);
      if (!headers.ok()) {
        return headers.status();
      }
      claim.signed_headers = *std::move(headers);
      have_headers = true;
    } else if (name == "Signature") {
      if (!IsLowerHex64(field)) {
        return absl::InvalidArgumentError("Authorization: malformed Signature");
      }
      claim.signature = std::string(field);
      have_signature = true;
    } else {
      return absl::InvalidArgumentError("Authorization: unknown field");
    }
  }
  if (!have_credential || !have_headers || !have_signature) {
    return absl::InvalidArgumentError(
        "Authorization: Credential, SignedHeaders and Signature are required");
  }
  return claim;
}

absl::StatusOr<SignatureClaim> ParsePresignedQuery(const QueryParams& query) {
  auto find = [&](std::string_view name) -> const std::string* {
    for (const auto& [key, value] : query) {
      if (key == name) {
        return &value;
      }
    }
    return nullptr;
  };
  const std::string* algorithm = find("X-Amz-Algorithm");
  const std::string* credential = find("X-Amz-Credential");
  const std::string* date = find("X-Amz-Date");
  const std::string* expires = find("X-Amz-Expires");
  const std::string* headers = find("X-Amz-SignedHeaders");
  const std::string* signature = find("X-Amz-Signature");
  if (!algorithm || !credential || !date || !expires || !headers || !signature) {
    return absl::InvalidArgumentError(
        "presigned URL: X-Amz-Algorithm, X-Amz-Credential, X-Amz-Date, X-Amz-Expires, "
        "X-Amz-SignedHeaders and X-Amz-Signature are required");
  }
  if (*algorithm != kSigV4Algorithm) {
    return absl::InvalidArgumentError("X-Amz-Algorithm: only AWS4-HMAC-SHA256 is supported");
  }
  SignatureClaim claim;
  auto parsed_credential = ParseCredential(*credential);
  if (!parsed_credential.ok()) {
    return parsed_credential.status();
  }
  claim.credential = *std::move(parsed_credential);
  auto parsed_headers = ParseSignedHeaders(*headers);
  if (!parsed_headers.ok()) {
    return parsed_headers.status();
  }
  claim.signed_headers = *std::move(parsed_headers);
  if (!IsLowerHex64(*signature)) {
    return absl::InvalidArgumentError("X-Amz-Signature: malformed");
  }
  claim.signature = *signature;
  claim.amz_date = *date;
  int64_t seconds = 0;
  if (!absl::SimpleAtoi(*expires, &seconds) || seconds < 1 ||
      absl::Seconds(seconds) > kMaxPresignedExpiry) {
    return absl::InvalidArgumentError("X-Amz-Expires must be between 1 and 604800 seconds");
  }
  claim.expires = absl::Seconds(seconds);
  return claim;
}

absl::StatusOr<absl::Time> ParseAmzDate(std::string_view text) {
  // absl::ParseTime's %Y would take all eight digits of the date, so the fields are cut here.
  auto field = [&](size_t pos, size_t len, int* out) {
    return absl::SimpleAtoi(Av(text.substr(pos, len)), out) &&
           std::all_of(text.begin() + pos, text.begin() + pos + len, absl::ascii_isdigit);
  };
  int year, month, day, hour, minute, second;
  if (text.size() != 16 || text[8] != 'T' || text[15] != 'Z' || !field(0, 4, &year) ||
      !field(4, 2, &month) || !field(6, 2, &day) || !field(9, 2, &hour) || !field(11, 2, &minute) ||
      !field(13, 2, &second)) {
    return absl::InvalidArgumentError("X-Amz-Date: expected YYYYMMDDTHHMMSSZ");
  }
  absl::CivilSecond civil(year, month, day, hour, minute, second);
  if (civil.year() != year || civil.month() != month || civil.day() != day ||
      civil.hour() != hour || civil.minute() != minute || civil.second() != second) {
    return absl::InvalidArgumentError("X-Amz-Date: not a valid time");
  }
  return absl::FromCivil(civil, absl::UTCTimeZone());
}

std::string CanonicalHeaderValue(const std::vector<std::string>& values) {
  std::vector<std::string> cleaned;
  cleaned.reserve(values.size());
  for (const auto& value : values) {
    std::string out;
    bool in_space = false;
    for (char c : absl::StripAsciiWhitespace(Av(value))) {
      if (c == ' ' || c == '\t') {
        in_space = true;
        continue;
      }
      if (in_space) {
        out.push_back(' ');
        in_space = false;
      }
      out.push_back(c);
    }
    cleaned.push_back(std::move(out));
  }
  return absl::StrJoin(cleaned, ",");
}

std::string CanonicalRequest(const CanonicalInput& in) {
  std::vector<std::pair<std::string, std::string>> query;
  if (in.query != nullptr) {
    for (const auto& [name, value] : *in.query) {
      if (in.skip_signature_param && name == "X-Amz-Signature") {
        continue;
      }
      query.emplace_back(UriEncode(name, true), UriEncode(value, true));
    }
  }
  std::sort(query.begin(), query.end());
  std::string canonical_query;
  for (const auto& [name, value] : query) {
    if (!canonical_query.empty()) {
      canonical_query.push_back('&');
    }
    absl::StrAppend(&canonical_query, name, "=", value);
  }
  std::string headers;
  std::vector<std::string> names;
  for (const auto& [name, value] : in.headers) {
    absl::StrAppend(&headers, name, ":", value, "\n");
    names.push_back(name);
  }
  return absl::StrCat(Av(in.method), "\n", UriEncode(in.decoded_path, false), "\n", canonical_query,
                      "\n", headers, "\n", absl::StrJoin(names, ";"), "\n", Av(in.payload_hash));
}

std::string StringToSign(std::string_view amz_date, std::string_view scope,
                         std::string_view canonical_request) {
  return absl::StrCat(Av(kSigV4Algorithm), "\n", Av(amz_date), "\n", Av(scope), "\n",
                      Sha256Hex(canonical_request));
}

std::string SigningKey(std::string_view secret, const Credential& credential) {
  std::string key = Hmac("AWS4" + std::string(secret), credential.date);
  key = Hmac(key, credential.region);
  key = Hmac(key, credential.service);
  return Hmac(key, "aws4_request");
}

std::string Sign(std::string_view signing_key, std::string_view string_to_sign) {
  return HexEncode(Hmac(signing_key, string_to_sign));
}

std::string ChunkStringToSign(std::string_view amz_date, std::string_view scope,
                              std::string_view previous_signature,
                              std::string_view chunk_sha256_hex) {
  return absl::StrCat("AWS4-HMAC-SHA256-PAYLOAD\n", Av(amz_date), "\n", Av(scope), "\n",
                      Av(previous_signature), "\n", Av(kEmptySha256), "\n", Av(chunk_sha256_hex));
}

std::string Sha256Hex(std::string_view data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  return HexEncode(std::string_view(reinterpret_cast<char*>(digest), sizeof(digest)));
}

std::string HexEncode(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kHexLower[c >> 4]);
    out.push_back(kHexLower[c & 15]);
  }
  return out;
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) {
    return false;
  }
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

bool IsSha256Hex(std::string_view text) {
  return text.size() == 64 &&
         std::all_of(text.begin(), text.end(), [](char c) { return HexValue(c) >= 0; });
}

}  // namespace gpuaas::storage::s3
