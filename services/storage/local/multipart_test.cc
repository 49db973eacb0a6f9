// Multipart uploads: parts on disk outside the volume, counted against the limits, assembled
// into one object with S3's ETag; wrong part lists refused; abort and expiry.
#include <filesystem>

#include "services/storage/local/local_test_util.h"
#include "services/storage/local/md5.h"

namespace gpuaas::storage::local {
namespace {

using ::gpuaas::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr int64_t kMiB = 1 << 20;

std::string Pattern(int64_t size, char seed) {
  std::string data(static_cast<size_t>(size), '\0');
  for (size_t i = 0; i < data.size(); ++i) {
    data[i] = static_cast<char>(seed + (i * 7) % 251);
  }
  return data;
}

class MultipartTest : public LocalBackendTest {
 protected:
  absl::StatusOr<PartInfo> UploadPart(const std::string& id, int number, const std::string& data) {
    absl::StatusOr<std::unique_ptr<ObjectWriter>> writer =
        volume_->CreatePart(id, number, static_cast<int64_t>(data.size()));
    if (!writer.ok()) {
      return writer.status();
    }
    absl::Status status = (*writer)->Write(data);
    if (!status.ok()) {
      return status;
    }
    absl::StatusOr<ObjectInfo> info = (*writer)->Commit();
    if (!info.ok()) {
      return info.status();
    }
    return PartInfo{number, info->size, info->etag, info->modify_time};
  }
  std::filesystem::path UploadsDir() const { return DataRoot() / "uploads" / "vol"; }
};

TEST_F(MultipartTest, HappyPath) {
  ASSERT_OK_AND_ASSIGN(UploadInfo upload, volume_->CreateUpload("models/big.bin", "model/x"));
  EXPECT_EQ(upload.upload_id.size(), 32u);
  EXPECT_EQ(upload.key, "models/big.bin");
  const std::string p1 = Pattern(5 * kMiB, 'a');
  const std::string p2 = Pattern(5 * kMiB + 3, 'b');
  const std::string p3 = Pattern(1234, 'c');
  // Out of order, and one part uploaded twice (the second replaces the first).
  ASSERT_OK_AND_ASSIGN(PartInfo part3, UploadPart(upload.upload_id, 3, p3));
  ASSERT_OK(UploadPart(upload.upload_id, 1, Pattern(5 * kMiB, 'z')));
  ASSERT_OK_AND_ASSIGN(PartInfo part1, UploadPart(upload.upload_id, 1, p1));
  ASSERT_OK_AND_ASSIGN(PartInfo part2, UploadPart(upload.upload_id, 2, p2));
  // Parts count bytes (not files) while they wait, and never show in the volume.
  EXPECT_EQ(volume_->Usage().bytes, static_cast<int64_t>(p1.size() + p2.size() + p3.size()));
  EXPECT_EQ(volume_->Usage().files, 0);
  EXPECT_TRUE(std::filesystem::is_empty(VolumeDir()));

  ASSERT_OK_AND_ASSIGN(std::vector<PartInfo> listed, volume_->ListParts(upload.upload_id));
  ASSERT_EQ(listed.size(), 3u);
  EXPECT_EQ(listed[0].part_number, 1);
  EXPECT_EQ(listed[0].etag, part1.etag);
  EXPECT_EQ(listed[2].size, 1234);
  ASSERT_OK_AND_ASSIGN(std::vector<UploadInfo> uploads, volume_->ListUploads());
  ASSERT_EQ(uploads.size(), 1u);
  EXPECT_EQ(uploads[0].upload_id, upload.upload_id);
  EXPECT_EQ(uploads[0].key, "models/big.bin");

  part1.etag = "\"" + part1.etag + "\"";  // as clients send it back
  ASSERT_OK_AND_ASSIGN(ObjectInfo object,
                       volume_->CompleteUpload(upload.upload_id, {part1, part2, part3}));
  Md5 md5s;
  for (const std::string* p : {&p1, &p2, &p3}) {
    Md5 one;
    one.Update(*p);
    md5s.Update(one.Digest());
  }
  EXPECT_EQ(object.etag, ToHex(md5s.Digest()) + "-3");
  EXPECT_EQ(object.content_type, "model/x");
  EXPECT_EQ(object.size, static_cast<int64_t>(p1.size() + p2.size() + p3.size()));
  EXPECT_THAT(Get(*volume_, "models/big.bin"), gpuaas::testing::IsOkAndHolds(p1 + p2 + p3));
  ASSERT_OK_AND_ASSIGN(ObjectInfo stat, volume_->Stat("models/big.bin"));
  EXPECT_EQ(stat.etag, object.etag);
  EXPECT_EQ(stat.content_type, "model/x");

  // The parts are gone, and the counters moved from them to the object.
  EXPECT_EQ(volume_->Usage().bytes, object.size);
  EXPECT_EQ(volume_->Usage().files, 1);
  EXPECT_TRUE(std::filesystem::is_empty(UploadsDir()));
  EXPECT_TRUE(std::filesystem::is_empty(DataRoot() / "staging"));
  EXPECT_THAT(volume_->ListParts(upload.upload_id), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(volume_->CompleteUpload(upload.upload_id, {part1, part2, part3}),
              StatusIs(absl::StatusCode::kNotFound));
  ASSERT_OK_AND_ASSIGN(VolumeUsage recounted, backend_->Recount("vol"));
  EXPECT_EQ(recounted.bytes, object.size);
}

TEST_F(MultipartTest, PartsLeftOutOfTheListAreDroppedAndUncounted) {
  ASSERT_OK_AND_ASSIGN(UploadInfo upload, volume_->CreateUpload("k", ""));
  ASSERT_OK_AND_ASSIGN(PartInfo part1, UploadPart(upload.upload_id, 1, "only part"));
  ASSERT_OK(UploadPart(upload.upload_id, 2, "left out"));
  ASSERT_OK_AND_ASSIGN(ObjectInfo object, volume_->CompleteUpload(upload.upload_id, {part1}));
  EXPECT_EQ(object.size, 9);
  EXPECT_EQ(volume_->Usage().bytes, 9);
  EXPECT_EQ(volume_->Usage().files, 1);
}

TEST_F(MultipartTest, WrongPartListsAreRefusedAndTheUploadStays) {
  ASSERT_OK_AND_ASSIGN(UploadInfo upload, volume_->CreateUpload("k", ""));
  const std::string id = upload.upload_id;
  ASSERT_OK_AND_ASSIGN(PartInfo part1, UploadPart(id, 1, Pattern(5 * kMiB, 'a')));
  ASSERT_OK_AND_ASSIGN(PartInfo part2, UploadPart(id, 2, "small"));
  ASSERT_OK_AND_ASSIGN(PartInfo part3, UploadPart(id, 3, "last"));
  PartInfo wrong = part1;
  wrong.etag = "00000000000000000000000000000000";
  PartInfo missing = part3;
  missing.part_number = 4;

  EXPECT_THAT(volume_->CompleteUpload(id, {}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("at least one part")));
  EXPECT_THAT(volume_->CompleteUpload(id, {wrong, part2}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("ETag")));
  EXPECT_THAT(volume_->CompleteUpload(id, {part2, part1}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("ascend")));
  EXPECT_THAT(volume_->CompleteUpload(id, {part1, part1}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("ascend")));
  EXPECT_THAT(volume_->CompleteUpload(id, {part1, missing}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("part 4 was not uploaded")));
  EXPECT_THAT(volume_->CompleteUpload(id, {part1, part2, part3}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("at least 5 MiB")));
  EXPECT_THAT(volume_->CreatePart(id, 0, 1), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(volume_->CreatePart(id, 10001, 1), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(volume_->Stat("k"), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_TRUE(std::filesystem::is_empty(DataRoot() / "staging"));

  // Still there, and completes once the list is right.
  ASSERT_OK(volume_->CompleteUpload(id, {part1, part3}));
  EXPECT_THAT(Get(*volume_, "k"), gpuaas::testing::IsOkAndHolds(Pattern(5 * kMiB, 'a') + "last"));
}

TEST_F(MultipartTest, UnknownUploads) {
  for (const std::string& id :
       std::vector<std::string>{"", "nope", "../../volumes/vol", std::string(32, '0')}) {
    EXPECT_THAT(volume_->CreatePart(id, 1, 1), StatusIs(absl::StatusCode::kNotFound)) << id;
    EXPECT_THAT(volume_->ListParts(id), StatusIs(absl::StatusCode::kNotFound)) << id;
    EXPECT_THAT(volume_->CompleteUpload(id, {PartInfo{1, 1, "x", {}}}),
                StatusIs(absl::StatusCode::kNotFound))
        << id;
    EXPECT_THAT(volume_->AbortUpload(id), StatusIs(absl::StatusCode::kNotFound)) << id;
  }
}

TEST_F(MultipartTest, AbortDropsThePartsAndTheirCount) {
  ASSERT_OK_AND_ASSIGN(UploadInfo upload, volume_->CreateUpload("k", ""));
  ASSERT_OK(UploadPart(upload.upload_id, 1, "12345"));
  // A part still being written when the upload is aborted never lands.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ObjectWriter> late,
                       volume_->CreatePart(upload.upload_id, 2, 3));
  ASSERT_OK(late->Write("abc"));
  EXPECT_EQ(volume_->Usage().bytes, 5);
  ASSERT_OK(volume_->AbortUpload(upload.upload_id));
  EXPECT_THAT(late->Commit(), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_EQ(volume_->Usage().bytes, 0);
  EXPECT_TRUE(std::filesystem::is_empty(UploadsDir()));
  EXPECT_THAT(volume_->AbortUpload(upload.upload_id), StatusIs(absl::StatusCode::kNotFound));
  ASSERT_OK_AND_ASSIGN(std::vector<UploadInfo> uploads, volume_->ListUploads());
  EXPECT_THAT(uploads, IsEmpty());
}

TEST_F(MultipartTest, PartsCountAgainstTheLimits) {
  ASSERT_OK_AND_ASSIGN(volume_, backend_->OpenVolume("vol", VolumeLimits{100, 1}));
  ASSERT_OK_AND_ASSIGN(UploadInfo upload, volume_->CreateUpload("k", ""));
  ASSERT_OK_AND_ASSIGN(PartInfo part1, UploadPart(upload.upload_id, 1, std::string(60, 'x')));
  EXPECT_THAT(volume_->CreatePart(upload.upload_id, 2, 41),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("byte limit")));
  EXPECT_THAT(volume_->Create("other", 41, ""), StatusIs(absl::StatusCode::kResourceExhausted));
  // Replacing a part credits the old one.
  ASSERT_OK_AND_ASSIGN(part1, UploadPart(upload.upload_id, 1, std::string(100, 'y')));
  EXPECT_EQ(volume_->Usage().bytes, 100);
  // Completing does not count twice: the object takes the parts' place.
  ASSERT_OK(volume_->CompleteUpload(upload.upload_id, {part1}));
  EXPECT_EQ(volume_->Usage().bytes, 100);
  EXPECT_EQ(volume_->Usage().files, 1);
  // The file limit applies when the object appears.
  ASSERT_OK_AND_ASSIGN(volume_, backend_->OpenVolume("vol", VolumeLimits{200, 1}));
  ASSERT_OK_AND_ASSIGN(UploadInfo second, volume_->CreateUpload("k2", ""));
  ASSERT_OK_AND_ASSIGN(PartInfo only, UploadPart(second.upload_id, 1, "z"));
  EXPECT_THAT(volume_->CompleteUpload(second.upload_id, {only}),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("file limit")));
  ASSERT_OK(volume_->ListParts(second.upload_id));  // kept, to retry after making room
  ASSERT_OK(volume_->Delete("k"));
  ASSERT_OK(volume_->CompleteUpload(second.upload_id, {only}));
  EXPECT_EQ(volume_->Usage().bytes, 1);
}

TEST_F(MultipartTest, ExpireDropsOldUploadsInEveryVolume) {
  ASSERT_OK(backend_->CreateVolume("other", kRoomy));
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Volume> other, backend_->OpenVolume("other", kRoomy));
  ASSERT_OK_AND_ASSIGN(UploadInfo old1, volume_->CreateUpload("a", ""));
  ASSERT_OK_AND_ASSIGN(UploadInfo old2, other->CreateUpload("b", ""));
  ASSERT_OK(UploadPart(old1.upload_id, 1, "123"));
  const absl::Time cutoff = absl::Now();
  ASSERT_OK_AND_ASSIGN(UploadInfo young, volume_->CreateUpload("c", ""));
  ASSERT_OK_AND_ASSIGN(int expired, backend_->ExpireUploads(cutoff));
  EXPECT_EQ(expired, 2);
  EXPECT_THAT(volume_->ListParts(old1.upload_id), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(other->ListParts(old2.upload_id), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_OK(volume_->ListParts(young.upload_id));
  EXPECT_EQ(volume_->Usage().bytes, 0);
  ASSERT_OK_AND_ASSIGN(expired, backend_->ExpireUploads(cutoff));
  EXPECT_EQ(expired, 0);
}

TEST_F(MultipartTest, UploadsSurviveARestartAndHalfCreatedOnesArePurged) {
  ASSERT_OK_AND_ASSIGN(UploadInfo upload, volume_->CreateUpload("k", "text/plain"));
  ASSERT_OK_AND_ASSIGN(PartInfo part1, UploadPart(upload.upload_id, 1, "persisted"));
  std::filesystem::create_directories(UploadsDir() / std::string(32, 'a'));  // no meta: a crash
  OpenBackend();
  EXPECT_FALSE(std::filesystem::exists(UploadsDir() / std::string(32, 'a')));
  EXPECT_EQ(volume_->Usage().bytes, 9);
  ASSERT_OK_AND_ASSIGN(ObjectInfo object, volume_->CompleteUpload(upload.upload_id, {part1}));
  EXPECT_EQ(object.content_type, "text/plain");
}

}  // namespace
}  // namespace gpuaas::storage::local
