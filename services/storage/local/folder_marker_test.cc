// Folder markers: "a/b/" keys as AWS and MinIO keep them, listed, counted, deleted.
#include <algorithm>
#include <filesystem>

#include "services/storage/local/local_test_util.h"

namespace gpuaas::storage::local {
namespace {

using ::gpuaas::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::vector<std::string> Keys(const ListResult& result) {
  std::vector<std::string> keys;
  for (const ObjectInfo& o : result.objects) keys.push_back(o.key);
  return keys;
}

using FolderMarkerTest = LocalBackendTest;

TEST_F(FolderMarkerTest, AFolderIsAZeroByteObjectEndingInASlash) {
  ASSERT_OK_AND_ASSIGN(ObjectInfo made, volume_->CreateFolder("photos/2026/"));
  EXPECT_EQ(made.key, "photos/2026/");
  EXPECT_EQ(made.size, 0);
  EXPECT_EQ(made.etag, "d41d8cd98f00b204e9800998ecf8427e");
  ASSERT_OK_AND_ASSIGN(ObjectInfo stat, volume_->Stat("photos/2026/"));
  EXPECT_EQ(stat.size, 0);
  EXPECT_THAT(Get(*volume_, "photos/2026/"), gpuaas::testing::IsOkAndHolds(std::string()));
  EXPECT_TRUE(std::filesystem::is_directory(VolumeDir() / "photos/2026"));
  // Again: the same folder, still one file against the limit.
  ASSERT_OK(volume_->CreateFolder("photos/2026/"));
  EXPECT_EQ(volume_->Usage().files, 1);
  // A directory on the way to it is no marker.
  EXPECT_THAT(volume_->Stat("photos/"), StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(FolderMarkerTest, ListedAsAKeyAndAsACommonPrefixWhereS3ListsThem) {
  ASSERT_OK(volume_->CreateFolder("a/"));
  ASSERT_OK(volume_->CreateFolder("a/empty/"));
  ASSERT_OK(Put(*volume_, "a/x", "x"));
  ASSERT_OK(Put(*volume_, "b/y", "y"));
  ASSERT_OK_AND_ASSIGN(ListResult all, volume_->List(ListRequest{}));
  EXPECT_THAT(Keys(all), ElementsAre("a/", "a/empty/", "a/x", "b/y"));
  ASSERT_OK_AND_ASSIGN(ListResult root, volume_->List(ListRequest{.delimiter = "/"}));
  EXPECT_THAT(Keys(root), IsEmpty());
  EXPECT_THAT(root.common_prefixes, ElementsAre("a/", "b/"));
  ASSERT_OK_AND_ASSIGN(ListResult in_a,
                       volume_->List(ListRequest{.prefix = "a/", .delimiter = "/"}));
  EXPECT_THAT(Keys(in_a), ElementsAre("a/", "a/x"));
  EXPECT_THAT(in_a.common_prefixes, ElementsAre("a/empty/"));
  // Pages split at the marker go on after it.
  ASSERT_OK_AND_ASSIGN(ListResult page, volume_->List(ListRequest{.max_keys = 1}));
  EXPECT_THAT(Keys(page), ElementsAre("a/"));
  ASSERT_OK_AND_ASSIGN(ListResult next,
                       volume_->List(ListRequest{.start_after = page.next_start_after}));
  EXPECT_THAT(Keys(next), ElementsAre("a/empty/", "a/x", "b/y"));
}

TEST_F(FolderMarkerTest, AFolderOutlivesItsLastFileAndGoesWhenDeleted) {
  ASSERT_OK(volume_->CreateFolder("f/"));
  ASSERT_OK(Put(*volume_, "f/g/h", "h"));
  ASSERT_OK(volume_->Delete("f/g/h"));
  // g was only on the way to h: gone with it; f is a marker: it stays.
  EXPECT_FALSE(std::filesystem::exists(VolumeDir() / "f/g"));
  ASSERT_OK_AND_ASSIGN(ListResult all, volume_->List(ListRequest{}));
  EXPECT_THAT(Keys(all), ElementsAre("f/"));
  ASSERT_OK(Put(*volume_, "f/kept", "k"));
  ASSERT_OK(volume_->Delete("f/"));
  // The marker went; what is in the folder stays, and the directory with it.
  ASSERT_OK_AND_ASSIGN(all, volume_->List(ListRequest{}));
  EXPECT_THAT(Keys(all), ElementsAre("f/kept"));
  ASSERT_OK(volume_->Delete("f/kept"));
  EXPECT_FALSE(std::filesystem::exists(VolumeDir() / "f"));
  ASSERT_OK(volume_->Delete("f/"));  // gone already: OK, as S3
  EXPECT_EQ(volume_->Usage().files, 0);
}

TEST_F(FolderMarkerTest, MarkersCountAgainstTheFileLimitAndInARecount) {
  ASSERT_OK_AND_ASSIGN(volume_, backend_->OpenVolume("vol", VolumeLimits{1000, 2}));
  ASSERT_OK(volume_->CreateFolder("one/"));
  ASSERT_OK(volume_->CreateFolder("two/"));
  EXPECT_THAT(volume_->CreateFolder("three/"),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("file limit")));
  EXPECT_FALSE(std::filesystem::exists(VolumeDir() / "three"));
  ASSERT_OK_AND_ASSIGN(VolumeUsage counted, backend_->Recount("vol"));
  EXPECT_EQ(counted.files, 2);
}

TEST_F(FolderMarkerTest, AFolderKeyThatCannotBeOneIsRefused) {
  EXPECT_THAT(volume_->CreateFolder("a//"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(volume_->CreateFolder("../"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(volume_->CreateFolder("a"), StatusIs(absl::StatusCode::kInvalidArgument));
  ASSERT_OK(Put(*volume_, "file", "x"));
  EXPECT_THAT(volume_->CreateFolder("file/"), StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(volume_->Stat("file/"), StatusIs(absl::StatusCode::kNotFound));
}

}  // namespace
}  // namespace gpuaas::storage::local
