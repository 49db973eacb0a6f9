// The ObjectWriter of the local backend: bytes go to a staged file (hashed on the way) under a
// quota reservation taken before the first byte; Commit hands both to a publish step (an object
// or a multipart part) that renames the file into place and settles the counters. Dropped
// without a commit, the staged file is removed and the reservation returned.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/functional/any_invocable.h"
#include "services/storage/backend.h"
#include "services/storage/local/quota_ledger.h"
#include "services/storage/local/staged_file.h"

namespace gpuaas::storage::local {

// Not thread-safe: one writer is fed by one request at a time.
class StagedWriter final : public ObjectWriter {
 public:
  using Publish = absl::AnyInvocable<absl::StatusOr<ObjectInfo>(StagedFile&, Reservation&)>;

  // `publish` keeps alive what the file and the reservation belong to (it is destroyed last).
  StagedWriter(Publish publish, std::unique_ptr<StagedFile> file, int64_t size,
               Reservation reservation);

  absl::Status Write(std::string_view data) override;
  std::string Md5() const override;
  absl::StatusOr<ObjectInfo> Commit() override;

 private:
  Publish publish_;
  std::unique_ptr<StagedFile> file_;
  const int64_t size_;
  Reservation reservation_;
  bool done_ = false;
  std::string committed_md5_;
};

}  // namespace gpuaas::storage::local
