#include "services/storage/storage_rules.h"

#include <openssl/rand.h>
#include <openssl/sha.h>

#include <cstdlib>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "libs/common/ids.h"
#include "libs/common/proto_time.h"
#include "libs/common/quantity.h"
#include "libs/common/status_macros.h"
#include "libs/service/validate.h"

namespace gpuaas::storage {
namespace {

using service::InvalidField;

constexpr std::string_view kKeyIdPrefix = "GK";
constexpr size_t kKeyIdLength = 20;
constexpr std::string_view kBase32Upper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
constexpr int kSecretRandomBytes = 30;  // 40 base64 characters, no padding

std::string Join(std::string_view field, std::string_view name) {
  return absl::StrCat(std::string(field), ".", std::string(name));
}

std::string RandomBytes(int n) {
  std::string out(static_cast<size_t>(n), '\0');
  // A CSPRNG failure after startup means the process cannot make secrets at all.
  if (RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), n) != 1) std::abort();
  return out;
}

absl::Status ValidatePrintableId(std::string_view field, std::string_view id, size_t max) {
  if (id.empty()) return InvalidField(field, "required");
  if (id.size() > max)
    return InvalidField(field, absl::StrCat("must be at most ", max, " characters"));
  for (char c : id) {
    if (c < 0x21 || c > 0x7e) return InvalidField(field, "must be printable ASCII");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateSpecName(std::string_view field, std::string_view name) {
  return service::ValidateSlug(field, name, ".");
}

absl::Status ValidateStorageId(std::string_view field, std::string_view id) {
  return service::ValidateSlug(field, id);
}

absl::Status ValidateSnapshotId(std::string_view field, std::string_view id) {
  return service::ValidateSlug(field, id);
}

absl::Status ValidateInstanceId(std::string_view field, std::string_view id) {
  return ValidatePrintableId(field, id, 128);
}

absl::Status ValidateAccessKeyId(std::string_view field, std::string_view id) {
  if (id.empty()) return InvalidField(field, "required");
  const bool shaped = id.size() == kKeyIdLength && id.substr(0, 2) == kKeyIdPrefix &&
                      id.find_first_not_of(kBase32Upper) == std::string_view::npos;
  if (!shaped) return InvalidField(field, "not an access key id (GK and 18 of [A-Z2-7])");
  return absl::OkStatus();
}

absl::StatusOr<pb::StorageSpec> CanonicalSpec(std::string_view field, const pb::StorageSpec& spec) {
  GPUAAS_RETURN_IF_ERROR(ValidateSpecName(Join(field, "spec_name"), spec.spec_name()));
  GPUAAS_ASSIGN_OR_RETURN(int64_t size_bytes, ParseBytes(Join(field, "size"), spec.size()));
  if (spec.max_files() < 1) return InvalidField(Join(field, "max_files"), "must be >= 1");
  GPUAAS_RETURN_IF_ERROR(service::ValidateNonNegative(Join(field, "price_per_gb_hour_micros"),
                                                      spec.price_per_gb_hour_micros()));
  if (!spec.backend_class().empty()) {
    GPUAAS_RETURN_IF_ERROR(
        service::ValidateSlug(Join(field, "backend_class"), spec.backend_class()));
  }
  GPUAAS_RETURN_IF_ERROR(
      service::ValidateDisplayText(Join(field, "description"), spec.description()));
  pb::StorageSpec out = spec;
  out.set_size(FormatBytes(size_bytes));
  out.set_size_bytes(size_bytes);
  if (out.backend_class().empty()) out.set_backend_class(std::string(kDefaultBackendClass));
  out.clear_create_time();
  out.clear_update_time();
  return out;
}

absl::StatusOr<absl::Duration> AccessorTtl(std::string_view field,
                                           const google::protobuf::Duration& ttl) {
  if (ttl.seconds() == 0 && ttl.nanos() == 0) return kDefaultAccessorTtl;
  if (ttl.nanos() != 0) return InvalidField(field, "must be whole seconds");
  const absl::Duration d = FromProtoDuration(ttl);
  if (d < absl::Seconds(1) || d > kMaxAccessorTtl) {
    return InvalidField(field, "must be 1s to 720h (30 days)");
  }
  return d;
}

std::string NewStorageId() { return NewId("stg-"); }

std::string NewStorageUid() { return NewId("vol_"); }

std::string NewAccessKeyId() {
  std::string id(kKeyIdPrefix);
  for (char b : RandomBytes(static_cast<int>(kKeyIdLength - kKeyIdPrefix.size()))) {
    id.push_back(kBase32Upper[static_cast<unsigned char>(b) % 32]);
  }
  return id;
}

std::string NewSecretAccessKey() { return absl::Base64Escape(RandomBytes(kSecretRandomBytes)); }

absl::Status StorageNotFound() { return absl::NotFoundError("storage not found"); }

absl::Status SpecNotFound(const std::string& name) {
  return absl::NotFoundError(absl::StrCat("storage spec ", name, " not found"));
}

std::string MountAttachmentId(std::string_view storage_uid, std::string_view instance_id) {
  std::string input(storage_uid);
  // A separator neither may hold, so ("a", "bc") and ("ab", "c") differ.
  input.push_back('\0');
  input.append(instance_id);
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(input.data()), input.size(), digest);
  constexpr char kHex[] = "0123456789abcdef";
  std::string id;
  for (int i = 0; i < 16; ++i) {
    id.push_back(kHex[digest[i] >> 4]);
    id.push_back(kHex[digest[i] & 0xf]);
  }
  return id;
}

}  // namespace gpuaas::storage
