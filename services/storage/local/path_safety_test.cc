// Nothing outside a volume is ever read or written: invalid keys are refused before they reach
// a path, and symlinks a workload plants inside its volume are never followed.
#include <sys/stat.h>

#include <filesystem>

#include "services/storage/local/local_test_util.h"
#include "services/storage/local/object_key.h"

namespace gpuaas::storage::local {
namespace {

using ::gpuaas::testing::StatusIs;
using ::testing::HasSubstr;

TEST(ObjectKeyTest, ValidAndInvalidKeys) {
  for (std::string_view key :
       std::vector<std::string_view>{"a", "a/b/c.txt", "a-b", "a.b", "...", "a/.hidden", "a b/ c",
                                     "ünï/cödé", "x/..y", "..z"}) {
    EXPECT_OK(ValidateKey(key)) << key;
  }
  for (std::string_view key :
       std::vector<std::string_view>{"", "/abs", "../x", "a/../../x", "a/..", "./a", "a/./b", ".",
                                     "..", "a//b", "a/", std::string_view("a\0b", 3)}) {
    EXPECT_THAT(ValidateKey(key), StatusIs(absl::StatusCode::kInvalidArgument)) << key;
  }
  EXPECT_OK(ValidateKey(std::string(200, 'k') + "/" + std::string(200, 'k') + "/" +
                        std::string(200, 'k') + "/" + std::string(200, 'k') + "/" +
                        std::string(220, 'k')));  // 1,024 bytes
  EXPECT_THAT(ValidateKey(std::string(1025, 'k')), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_OK(ValidateKey(std::string(255, 'k') + "/" + std::string(255, 'k')));
  EXPECT_THAT(ValidateKey("a/" + std::string(256, 'k')),
              StatusIs(absl::StatusCode::kInvalidArgument, ::testing::HasSubstr("255")));
}

TEST(ObjectKeyTest, StorageIds) {
  EXPECT_OK(ValidateStorageId("sto_abc123"));
  EXPECT_OK(ValidateStorageId("a.b-c_D"));
  for (std::string_view id : std::vector<std::string_view>{"", ".", "..", ".hidden", "a/b", "a b",
                                                           std::string_view("a\0", 2)}) {
    EXPECT_THAT(ValidateStorageId(id), StatusIs(absl::StatusCode::kInvalidArgument)) << id;
  }
  EXPECT_THAT(ValidateStorageId(std::string(129, 'a')),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

class PathSafetyTest : public LocalBackendTest {
 protected:
  void SetUp() override {
    LocalBackendTest::SetUp();
    WriteHostFile(Outside() / "secret", "outside secret");
    WriteHostFile(Outside() / "dir/victim", "outside victim");
  }
  void ExpectOutsideUntouched() {
    EXPECT_EQ(ReadHostFile(Outside() / "secret"), "outside secret");
    EXPECT_EQ(ReadHostFile(Outside() / "dir/victim"), "outside victim");
    int entries = 0;
    for (const auto& e : std::filesystem::recursive_directory_iterator(Outside())) {
      (void)e;
      ++entries;
    }
    EXPECT_EQ(entries, 3);  // secret, dir, dir/victim: nothing added
  }
};

TEST_F(PathSafetyTest, EscapingKeysAreRefusedEverywhere) {
  for (std::string_view key :
       std::vector<std::string_view>{"../outside/secret", "a/../../outside/secret", "/abs", "a//b",
                                     ".", "..", std::string_view("a\0b", 3)}) {
    EXPECT_THAT(volume_->Stat(key), StatusIs(absl::StatusCode::kInvalidArgument)) << key;
    EXPECT_THAT(volume_->Open(key), StatusIs(absl::StatusCode::kInvalidArgument)) << key;
    EXPECT_THAT(volume_->Create(key, 1, ""), StatusIs(absl::StatusCode::kInvalidArgument)) << key;
    EXPECT_THAT(volume_->Delete(key), StatusIs(absl::StatusCode::kInvalidArgument)) << key;
    EXPECT_THAT(volume_->CreateUpload(key, ""), StatusIs(absl::StatusCode::kInvalidArgument))
        << key;
  }
  ASSERT_OK(Put(*volume_, "ok", "1"));
  EXPECT_THAT(volume_->Copy("ok", "../../outside/x"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(volume_->Copy("../outside/secret", "y"),
              StatusIs(absl::StatusCode::kInvalidArgument));
  ExpectOutsideUntouched();
}

TEST_F(PathSafetyTest, ASymlinkLeafIsNeverFollowed) {
  std::filesystem::create_symlink(Outside() / "secret", VolumeDir() / "leaf");
  EXPECT_THAT(volume_->Stat("leaf"), StatusIs(absl::StatusCode::kPermissionDenied));
  EXPECT_THAT(volume_->Open("leaf"), StatusIs(absl::StatusCode::kPermissionDenied));
  EXPECT_THAT(volume_->Create("leaf", 5, ""), StatusIs(absl::StatusCode::kPermissionDenied));
  EXPECT_THAT(volume_->Delete("leaf"), StatusIs(absl::StatusCode::kPermissionDenied));
  EXPECT_THAT(volume_->Copy("leaf", "copy"), StatusIs(absl::StatusCode::kPermissionDenied));
  ASSERT_OK(Put(*volume_, "ok", "1"));
  EXPECT_THAT(volume_->Copy("ok", "leaf"), StatusIs(absl::StatusCode::kPermissionDenied));
  // Listing skips it rather than reading through it.
  ASSERT_OK_AND_ASSIGN(ListResult list, volume_->List(ListRequest{}));
  ASSERT_EQ(list.objects.size(), 1u);
  EXPECT_EQ(list.objects[0].key, "ok");
  EXPECT_TRUE(std::filesystem::is_symlink(VolumeDir() / "leaf"));
  ExpectOutsideUntouched();
}

TEST_F(PathSafetyTest, ASymlinkPlantedWhileWritingIsRefusedAtCommit) {
  // The writer's check passes; the workload then plants a symlink where the object goes.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ObjectWriter> writer, volume_->Create("late", 3, ""));
  std::filesystem::create_symlink(Outside() / "secret", VolumeDir() / "late");
  ASSERT_OK(writer->Write("new"));
  EXPECT_THAT(writer->Commit(), StatusIs(absl::StatusCode::kPermissionDenied));
  ExpectOutsideUntouched();
}

TEST_F(PathSafetyTest, ASymlinkedDirectoryOnThePathIsNeverFollowed) {
  std::filesystem::create_directories(VolumeDir() / "a");
  std::filesystem::create_directory_symlink(Outside() / "dir", VolumeDir() / "a/mid");
  for (std::string_view key : std::vector<std::string_view>{"a/mid/victim", "a/mid/new/file"}) {
    EXPECT_THAT(volume_->Stat(key), StatusIs(absl::StatusCode::kPermissionDenied)) << key;
    EXPECT_THAT(volume_->Open(key), StatusIs(absl::StatusCode::kPermissionDenied)) << key;
    EXPECT_THAT(volume_->Create(key, 1, ""), StatusIs(absl::StatusCode::kPermissionDenied)) << key;
    EXPECT_THAT(volume_->Delete(key), StatusIs(absl::StatusCode::kPermissionDenied)) << key;
    EXPECT_THAT(volume_->CreateUpload(key, ""), StatusIs(absl::StatusCode::kPermissionDenied))
        << key;
  }
  EXPECT_THAT(volume_->List(ListRequest{.prefix = "a/mid/"}),
              StatusIs(absl::StatusCode::kPermissionDenied));
  EXPECT_THAT(volume_->List(ListRequest{.prefix = "a/mid/", .delimiter = "/"}),
              StatusIs(absl::StatusCode::kPermissionDenied));
  // A listing from above walks past it.
  ASSERT_OK(Put(*volume_, "a/real", "1"));
  ASSERT_OK_AND_ASSIGN(ListResult list, volume_->List(ListRequest{}));
  ASSERT_EQ(list.objects.size(), 1u);
  EXPECT_EQ(list.objects[0].key, "a/real");
  ASSERT_OK_AND_ASSIGN(list, volume_->List(ListRequest{.prefix = "a/", .delimiter = "/"}));
  EXPECT_TRUE(list.common_prefixes.empty());
  // A symlinked directory at the root, and one pointing inside the volume: refused all the same.
  std::filesystem::create_directory_symlink(Outside(), VolumeDir() / "top");
  EXPECT_THAT(volume_->Stat("top/secret"), StatusIs(absl::StatusCode::kPermissionDenied));
  std::filesystem::create_directory_symlink(VolumeDir() / "a", VolumeDir() / "inner");
  EXPECT_THAT(volume_->Stat("inner/real"), StatusIs(absl::StatusCode::kPermissionDenied));
  // Recount does not count through it either.
  ASSERT_OK_AND_ASSIGN(VolumeUsage usage, backend_->Recount("vol"));
  EXPECT_EQ(usage.files, 1);
  ExpectOutsideUntouched();
}

TEST_F(PathSafetyTest, RemovingAVolumeNeverFollowsItsSymlinks) {
  std::filesystem::create_directory_symlink(Outside() / "dir", VolumeDir() / "link");
  std::filesystem::create_symlink(Outside() / "secret", VolumeDir() / "leaf");
  ASSERT_OK(Put(*volume_, "x/y", "1"));
  volume_.reset();
  ASSERT_OK(backend_->DeleteVolume("vol"));
  EXPECT_FALSE(std::filesystem::exists(VolumeDir()));
  ExpectOutsideUntouched();
}

TEST_F(PathSafetyTest, SpecialFilesAreNoObjects) {
  ASSERT_EQ(::mkfifo((VolumeDir() / "fifo").c_str(), 0600), 0);
  EXPECT_THAT(volume_->Stat("fifo"), StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(volume_->Open("fifo"), StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(volume_->Create("fifo", 1, ""), StatusIs(absl::StatusCode::kFailedPrecondition));
  ASSERT_OK_AND_ASSIGN(ListResult list, volume_->List(ListRequest{}));
  EXPECT_TRUE(list.objects.empty());
}

}  // namespace
}  // namespace gpuaas::storage::local
