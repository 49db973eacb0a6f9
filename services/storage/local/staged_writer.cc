#include "services/storage/local/staged_writer.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace gpuaas::storage::local {

StagedWriter::StagedWriter(Publish publish, std::unique_ptr<StagedFile> file, int64_t size,
                           Reservation reservation)
    : publish_(std::move(publish)),
      file_(std::move(file)),
      size_(size),
      reservation_(std::move(reservation)) {}

absl::Status StagedWriter::Write(std::string_view data) {
  if (done_) {
    return absl::FailedPreconditionError("write: the object was already committed");
  }
  if (static_cast<int64_t>(data.size()) > size_ - file_->size()) {
    return absl::ResourceExhaustedError(
        absl::StrCat("write: more than the announced ", size_, " bytes"));
  }
  return file_->Append(data);
}

std::string StagedWriter::Md5() const {
  return file_ != nullptr ? file_->Md5Digest() : committed_md5_;
}

absl::StatusOr<ObjectInfo> StagedWriter::Commit() {
  if (done_) {
    return absl::FailedPreconditionError("commit: the object was already committed");
  }
  if (file_->size() != size_) {
    return absl::FailedPreconditionError(
        absl::StrCat("commit: ", file_->size(), " bytes written, ", size_, " announced"));
  }
  done_ = true;
  committed_md5_ = file_->Md5Digest();
  absl::StatusOr<ObjectInfo> info = publish_(*file_, reservation_);
  // Whatever happened, the staged file is gone now or published; free it and what remains of
  // the reservation at once rather than when the caller drops the writer.
  file_.reset();
  reservation_ = Reservation();
  return info;
}

}  // namespace gpuaas::storage::local
