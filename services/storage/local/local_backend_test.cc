// Volumes' lives: create, open (one shared state), mount source, delete with crash safety,
// one backend per data root.
#include <filesystem>

#include "services/storage/local/local_test_util.h"

namespace gpuaas::storage::local {
namespace {

using ::gpuaas::testing::StatusIs;
using ::testing::HasSubstr;

using BackendTest = LocalBackendTest;

TEST_F(BackendTest, CreateOpenAndMount) {
  EXPECT_EQ(backend_->backend_class(), "local");
  EXPECT_OK(backend_->CreateVolume("vol", kRoomy));  // idempotent, content kept
  EXPECT_THAT(backend_->OpenVolume("nope", kRoomy), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(backend_->Recount("nope"), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(backend_->MountSourceFor("nope", "node"), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(backend_->CreateVolume("../x", kRoomy),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("storage_id")));
  EXPECT_THAT(backend_->OpenVolume("..", kRoomy), StatusIs(absl::StatusCode::kInvalidArgument));
  ASSERT_OK_AND_ASSIGN(MountSource mount, backend_->MountSourceFor("vol", "node-1"));
  EXPECT_EQ(std::filesystem::path(mount.host_path), std::filesystem::absolute(VolumeDir()));
  ASSERT_OK(Put(*volume_, "f", "x"));
  EXPECT_EQ(ReadHostFile(std::filesystem::path(mount.host_path) / "f"), "x");
}

TEST_F(BackendTest, SnapshotsAreUnimplementedWithAMessageNamingTheBackend) {
  const auto unimplemented = StatusIs(absl::StatusCode::kUnimplemented,
                                      HasSubstr("the local storage backend has no snapshots"));
  EXPECT_THAT(backend_->CreateSnapshot("vol", "s"), unimplemented);
  EXPECT_THAT(backend_->ListSnapshots("vol"), unimplemented);
  EXPECT_THAT(backend_->DeleteSnapshot("vol", "s"), unimplemented);
  EXPECT_THAT(backend_->RestoreSnapshot("vol", "s", "copy", kRoomy), unimplemented);
}

TEST_F(BackendTest, OneSharedVolumePerStorageWithTheLatestLimits) {
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Volume> again,
                       backend_->OpenVolume("vol", VolumeLimits{10, 10}));
  EXPECT_EQ(again.get(), volume_.get());
  EXPECT_THAT(volume_->Create("f", 11, ""), StatusIs(absl::StatusCode::kResourceExhausted));
  ASSERT_OK(backend_->OpenVolume("vol", VolumeLimits{20, 10}));
  EXPECT_OK(volume_->Create("f", 11, ""));
}

TEST_F(BackendTest, DeleteVolumeRemovesEverythingAndIsIdempotent) {
  ASSERT_OK(Put(*volume_, "a/b", "data"));
  ASSERT_OK_AND_ASSIGN(UploadInfo upload, volume_->CreateUpload("c", ""));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ObjectWriter> in_flight, volume_->Create("late", 1, ""));
  ASSERT_OK(backend_->DeleteVolume("vol"));
  EXPECT_FALSE(std::filesystem::exists(VolumeDir()));
  EXPECT_FALSE(std::filesystem::exists(DataRoot() / "uploads/vol"));
  EXPECT_TRUE(std::filesystem::is_empty(DataRoot() / "trash"));
  // Whoever still holds the volume gets NOT_FOUND, and a write in flight never lands.
  ASSERT_OK(in_flight->Write("x"));
  EXPECT_THAT(in_flight->Commit(), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(volume_->Stat("a/b"), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(volume_->Create("x", 1, ""), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(volume_->ListParts(upload.upload_id), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(backend_->OpenVolume("vol", kRoomy), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_OK(backend_->DeleteVolume("vol"));
  // A new volume of that id starts empty.
  ASSERT_OK(backend_->CreateVolume("vol", kRoomy));
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Volume> fresh, backend_->OpenVolume("vol", kRoomy));
  EXPECT_EQ(fresh->Usage().files, 0);
  EXPECT_THAT(fresh->Stat("a/b"), StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(BackendTest, ACrashMidDeleteIsFinishedOnRestart) {
  ASSERT_OK(Put(*volume_, "a/b/c", "data"));
  ASSERT_OK(Put(*volume_, "d", "more"));
  volume_.reset();
  backend_.reset();
  // What DeleteVolume's first step leaves if the process dies right after it, plus a staged
  // file of a write that was in flight.
  std::filesystem::rename(VolumeDir(), DataRoot() / "trash" / "vol.0123.trash");
  WriteHostFile(DataRoot() / "staging" / "0123.tmp", "half a write");
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Backend> restarted,
                       NewLocalBackend(LocalBackendOptions{DataRoot().string(), false}));
  EXPECT_TRUE(std::filesystem::is_empty(DataRoot() / "trash"));
  EXPECT_TRUE(std::filesystem::is_empty(DataRoot() / "staging"));
  EXPECT_THAT(restarted->OpenVolume("vol", kRoomy), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_OK(restarted->DeleteVolume("vol"));  // the service's retry finds nothing left to do
}

TEST_F(BackendTest, UploadsOfAVanishedVolumeArePurgedOnRestart) {
  ASSERT_OK(volume_->CreateUpload("k", ""));
  volume_.reset();
  backend_.reset();
  std::filesystem::rename(VolumeDir(), DataRoot() / "trash" / "vol.x.trash");
  ASSERT_OK(NewLocalBackend(LocalBackendOptions{DataRoot().string(), false}));
  EXPECT_FALSE(std::filesystem::exists(DataRoot() / "uploads/vol"));
}

TEST_F(BackendTest, OneBackendPerDataRoot) {
  EXPECT_THAT(NewLocalBackend(LocalBackendOptions{DataRoot().string(), false}),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("in use")));
  EXPECT_THAT(NewLocalBackend(LocalBackendOptions{"", false}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("data_root")));
}

TEST_F(BackendTest, ARelativeDataRootMountsAsAnAbsolutePath) {
  volume_.reset();
  backend_.reset();
  const std::filesystem::path cwd = std::filesystem::current_path();
  std::filesystem::current_path(temp_.path());
  absl::StatusOr<std::unique_ptr<Backend>> backend =
      NewLocalBackend(LocalBackendOptions{"./data/", false});
  std::filesystem::current_path(cwd);
  ASSERT_OK(backend);
  ASSERT_OK_AND_ASSIGN(MountSource mount, (*backend)->MountSourceFor("vol", "n"));
  EXPECT_EQ(mount.host_path,
            (std::filesystem::canonical(temp_.path()) / "data/volumes/vol").string());
}

}  // namespace
}  // namespace gpuaas::storage::local
