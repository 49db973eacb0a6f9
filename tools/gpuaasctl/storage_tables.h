// What `-o table` prints for the storage service's resources: storage specs, storages,
// accessors, and the setup lines an accessor's keys go into. Every cell but a trailing
// free-text one is one word, so awk and cut work on the rows (output.h's Table puts "-" in
// empty cells).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "gpuaas/storage/v1/storage.pb.h"

namespace gpuaas::ctl {

namespace storagepb = ::gpuaas::storage::v1;

// creating, ready, deleting. Case-insensitive, and the enum's own spelling
// (STORAGE_STATE_READY, as `-o json` prints it) works too. Error: INVALID_ARGUMENT naming
// `flag` and listing the valid names.
absl::StatusOr<storagepb::StorageState> ParseStorageState(std::string_view flag,
                                                          std::string_view name);

// `creating`, `ready`, `deleting`; "" for UNSPECIFIED, the number for values this build does
// not know.
std::string StorageStateName(storagepb::StorageState state);

// A byte count for people, in binary units with one decimal: "0B", "512B", "1.5KiB", "100.0GiB".
std::string HumanBytes(int64_t bytes);

// SPEC SIZE MAX-FILES PRICE/GB/H BACKEND CREATED DESCRIPTION; the price as a decimal of the
// currency unit per GB-hour ("0.00005").
std::string StorageSpecTable(
    const google::protobuf::RepeatedPtrField<storagepb::StorageSpec>& specs);

// STORAGE TENANT SPEC STATE SIZE MAX-FILES ATTACHED CREATED NAME; ATTACHED is the instances,
// comma-separated, with ":ro" for read-only attachments.
std::string StorageTable(const google::protobuf::RepeatedPtrField<storagepb::Storage>& storages);

// One storage: its fields, usage against its size and file limit, and its attachments.
std::string StorageDetail(const storagepb::Storage& storage);

// ACCESS-KEY STORAGE MODE EXPIRES CREATOR CREATED DESCRIPTION; MODE is `read-only` or
// `read-write`.
std::string AccessorTable(const google::protobuf::RepeatedPtrField<storagepb::Accessor>& accessors);

// What CreateAccessor answered, for people: the key id and secret (shown this once), then
// ready-to-paste settings for the AWS CLI (a profile named after the storage, and environment
// variables) and an rclone remote, all pointing at `s3_endpoint`.
std::string AccessorSetupText(const storagepb::CreateAccessorResponse& resp,
                              std::string_view s3_endpoint);

// Snapshots as rows: id, storage, bytes it held, when taken.
std::string SnapshotTable(const google::protobuf::RepeatedPtrField<storagepb::Snapshot>& snapshots);

// "STORAGE/SNAPSHOT" (--from-snapshot) as a SnapshotRef. INVALID_ARGUMENT naming `flag`
// otherwise; the ids themselves are checked by the server.
absl::StatusOr<storagepb::SnapshotRef> ParseSnapshotRef(std::string_view flag,
                                                        std::string_view value);

}  // namespace gpuaas::ctl
