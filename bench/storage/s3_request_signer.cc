#include "bench/storage/s3_request_signer.h"

#include "absl/time/clock.h"
#include "services/storage/s3/sigv4.h"

namespace gpuaas::storage::bench {

httplib::Headers SignRequest(const S3Credentials& credentials, std::string_view method,
                             std::string_view path, std::string_view host, absl::Time now) {
  const std::string amz_date = absl::FormatTime("%Y%m%dT%H%M%SZ", now, absl::UTCTimeZone());
  const s3::Credential credential{.access_key_id = credentials.access_key_id,
                                  .date = amz_date.substr(0, 8),
                                  .region = credentials.region,
                                  .service = "s3"};
  const s3::QueryParams no_query;
  s3::CanonicalInput in{.method = method,
                        .decoded_path = path,
                        .query = &no_query,
                        .headers = {{"host", std::string(host)},
                                    {"x-amz-content-sha256", std::string(s3::kUnsignedPayload)},
                                    {"x-amz-date", amz_date}},
                        .payload_hash = s3::kUnsignedPayload};
  const std::string signature =
      s3::Sign(s3::SigningKey(credentials.secret_access_key, credential),
               s3::StringToSign(amz_date, credential.Scope(), s3::CanonicalRequest(in)));
  return {
      {"x-amz-content-sha256", std::string(s3::kUnsignedPayload)},
      {"x-amz-date", amz_date},
      {"Authorization",
       std::string(s3::kSigV4Algorithm) + " Credential=" + credentials.access_key_id + "/" +
           credential.Scope() +
           ", SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=" + signature},
  };
}

}  // namespace gpuaas::storage::bench
