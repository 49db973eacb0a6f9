#include "libs/service/request_log.h"

#include <openssl/sha.h>

#include "absl/strings/escaping.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace gpuaas::service {
namespace {

// "{schema}" is replaced once, at construction, by the owning service's schema name.
constexpr std::string_view kFindRequest =
    "SELECT request_hash, result_id FROM {schema}.requests "
    "WHERE method = $1 AND caller = $2 AND request_id = $3";
constexpr std::string_view kRecordRequest =
    "INSERT INTO {schema}.requests (method, caller, request_id, request_hash, result_id) "
    "VALUES ($1, $2, $3, $4, $5)";

std::string WithSchema(std::string_view sql, std::string_view schema) {
  constexpr std::string_view kPlaceholder = "{schema}";
  std::string out(sql);
  out.replace(out.find(kPlaceholder), kPlaceholder.size(), schema);
  return out;
}

}  // namespace

RequestLog::RequestLog(std::string_view schema)
    : find_sql_(WithSchema(kFindRequest, schema)),
      record_sql_(WithSchema(kRecordRequest, schema)) {}

absl::StatusOr<CreateOutcome> RequestLog::Create(
    db::Tx& tx, const RequestKey& key, const google::protobuf::Message& request,
    absl::FunctionRef<absl::StatusOr<std::string>(db::Tx&)> create) const {
  if (key.request_id.empty()) {
    absl::StatusOr<std::string> id = create(tx);
    if (!id.ok()) {
      return id.status();
    }
    return CreateOutcome{*std::move(id), true};
  }
  const std::string method(key.method), caller(key.caller), request_id(key.request_id);
  const std::string fingerprint = Fingerprint(request);
  if (std::optional<db::Row> prior = tx.Exec(find_sql_, method, caller, request_id).First()) {
    const auto hash = prior->Get<std::string>(0);
    // Rows written before fingerprints existed carry none: trust the key alone.
    if (!hash.empty() && hash != fingerprint) {
      return absl::AlreadyExistsError(
          "request_id: already used for a different request; use a new request_id");
    }
    return CreateOutcome{prior->Get<std::string>(1), false};
  }
  absl::StatusOr<std::string> id = create(tx);
  if (!id.ok()) {
    return id.status();
  }
  tx.Exec(record_sql_, method, caller, request_id, fingerprint, *id);
  return CreateOutcome{*std::move(id), true};
}

std::string Fingerprint(const google::protobuf::Message& message) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream out(&stream);
    out.SetSerializationDeterministic(true);
    message.ByteSizeLong();  // SerializeWithCachedSizes needs the sizes computed first
    message.SerializeWithCachedSizes(&out);
  }
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), digest);
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(digest), sizeof(digest)));
}

}  // namespace gpuaas::service
