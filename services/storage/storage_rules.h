// The rules the storage service's input must follow before anything is stored, and the shapes
// of what it makes (storage ids, S3 keys). Plain C++ without a database, unit-tested in
// storage_rules_test.cc. Errors are INVALID_ARGUMENT naming the field ("spec.size: ..."), ready
// to pass to the client.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "google/protobuf/duration.pb.h"
#include "gpuaas/storage/v1/storage.pb.h"

namespace gpuaas::storage {

namespace pb = ::gpuaas::storage::v1;

// The backend class a spec gets when it names none.
inline constexpr std::string_view kDefaultBackendClass = "local";

// Accessor lifetimes: CreateAccessor's ttl when unset, and the longest it may ask for. A day
// covers an upload session; a month bounds how long a leaked key stays useful.
inline constexpr absl::Duration kDefaultAccessorTtl = absl::Hours(24);
inline constexpr absl::Duration kMaxAccessorTtl = absl::Hours(24 * 30);

// A slug (libs/service/validate.h) that may hold '.': "ssd-100g", "nvme.1t".
absl::Status ValidateSpecName(std::string_view field, std::string_view name);

// A slug: lowercase letters, digits and '-', 3 to 63 characters, starting with a letter, not
// ending with '-'. Every such id is also a valid S3 bucket name, which is what it serves as.
absl::Status ValidateStorageId(std::string_view field, std::string_view id);

// A snapshot id: a slug like a storage id (it names a CephFS snapshot directory).
absl::Status ValidateSnapshotId(std::string_view field, std::string_view id);

// An instance id: printable ASCII, 1 to 128. (Node ids: service::ValidateNodeId.)
absl::Status ValidateInstanceId(std::string_view field, std::string_view id);

// "GK" and 18 characters of [A-Z2-7]: 20 characters like an AWS access key id.
absl::Status ValidateAccessKeyId(std::string_view field, std::string_view id);

// Every field of `spec` under `field` ("spec"): the name, a positive size quantity, max_files
// >= 1, a price >= 0, display text. Returns the spec as stored: size in canonical form,
// size_bytes set, an empty backend class made kDefaultBackendClass, no times.
absl::StatusOr<pb::StorageSpec> CanonicalSpec(std::string_view field, const pb::StorageSpec& spec);

// An accessor's lifetime from CreateAccessor's ttl: unset or zero is kDefaultAccessorTtl;
// otherwise whole seconds from 1 s to kMaxAccessorTtl.
absl::StatusOr<absl::Duration> AccessorTtl(std::string_view field,
                                           const google::protobuf::Duration& ttl);

// A new server-chosen storage id: "stg-" and 26 characters of [a-z2-7] (a valid storage id).
std::string NewStorageId();

// A new storage identity (Storage.storage_uid): "vol_" and 26 characters of [a-z2-7]. Never a
// valid storage id ('_'), so it cannot equal the storage_id that storages created before
// identities keep as theirs.
std::string NewStorageUid();

// A new S3 access key id (see ValidateAccessKeyId) and secret access key (40 characters of
// [A-Za-z0-9+/], 240 random bits), from OpenSSL's CSPRNG.
std::string NewAccessKeyId();
std::string NewSecretAccessKey();

// NOT_FOUND for a storage the caller's tenant does not have: the same answer whether it exists
// in another tenant or not at all.
absl::Status StorageNotFound();

// NOT_FOUND naming the storage spec.
absl::Status SpecNotFound(const std::string& name);

// The id of the attachment of storage `storage_uid` to instance `instance_id`, as the backend's
// mount credential names it (Backend::GrantMount): 32 hex digits of a SHA-256 of both, so it is
// [a-z0-9], the same at every attach and detach of that pair, and another for any other pair
// (a storage made later under the same storage_id has another uid).
std::string MountAttachmentId(std::string_view storage_uid, std::string_view instance_id);

}  // namespace gpuaas::storage
