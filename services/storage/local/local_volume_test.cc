// Objects in one volume: put/get/stat/overwrite/delete/copy, what an abandoned write leaves,
// ETags and content types, and counters against a recount.
#include <sys/stat.h>
#include <sys/xattr.h>

#include <filesystem>

#include "services/storage/local/local_test_util.h"
#include "services/storage/local/md5.h"

namespace gpuaas::storage::local {
namespace {

using ::gpuaas::testing::IsOk;
using ::gpuaas::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string Md5Hex(std::string_view data) {
  Md5 md5;
  md5.Update(data);
  return ToHex(md5.Digest());
}

using LocalVolumeTest = LocalBackendTest;

TEST_F(LocalVolumeTest, PutGetStatAndTheFileOnDisk) {
  ASSERT_OK_AND_ASSIGN(ObjectInfo put, Put(*volume_, "models/sd/v1.safetensors", "weights",
                                           "application/octet-stream"));
  EXPECT_EQ(put.key, "models/sd/v1.safetensors");
  EXPECT_EQ(put.size, 7);
  EXPECT_EQ(put.etag, Md5Hex("weights"));
  EXPECT_EQ(put.content_type, "application/octet-stream");

  EXPECT_THAT(Get(*volume_, "models/sd/v1.safetensors"),
              gpuaas::testing::IsOkAndHolds(std::string("weights")));
  ASSERT_OK_AND_ASSIGN(ObjectInfo stat, volume_->Stat("models/sd/v1.safetensors"));
  EXPECT_EQ(stat.size, 7);
  EXPECT_EQ(stat.etag, put.etag);
  EXPECT_EQ(stat.content_type, "application/octet-stream");
  EXPECT_EQ(stat.modify_time, put.modify_time);

  // The key is that file under the volume's directory, and nothing else is in there.
  EXPECT_EQ(ReadHostFile(VolumeDir() / "models/sd/v1.safetensors"), "weights");
  int entries = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(VolumeDir())) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 3);  // models, models/sd, the file
  EXPECT_TRUE(std::filesystem::is_empty(DataRoot() / "staging"));
}

TEST_F(LocalVolumeTest, MissingKeysDirectoriesAndFilesOnTheWay) {
  EXPECT_THAT(volume_->Stat("nope"), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(volume_->Open("a/b/nope"), StatusIs(absl::StatusCode::kNotFound));
  ASSERT_OK(Put(*volume_, "dir/file", "x"));
  EXPECT_THAT(volume_->Stat("dir"),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("names a directory")));
  EXPECT_THAT(volume_->Stat("dir/file/deeper"),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("passes through a file")));
  EXPECT_THAT(Put(*volume_, "dir", "y"), StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(Put(*volume_, "dir/file/deeper", "y"),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(volume_->Delete("dir"), StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_OK(volume_->Delete("dir/file/deeper"));  // no such key: fine, as in S3
  EXPECT_OK(volume_->Delete("never/was"));
  EXPECT_THAT(Get(*volume_, "dir/file"), gpuaas::testing::IsOkAndHolds(std::string("x")));
}

TEST_F(LocalVolumeTest, OverwriteReplacesAtomicallyAndOpenReadersKeepTheOldContent) {
  ASSERT_OK(Put(*volume_, "f", "old content"));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ObjectReader> reader, volume_->Open("f"));
  ASSERT_OK_AND_ASSIGN(ObjectInfo put, Put(*volume_, "f", "new"));
  EXPECT_EQ(put.etag, Md5Hex("new"));
  char buf[64];
  ASSERT_OK_AND_ASSIGN(size_t n, reader->ReadAt(0, buf, sizeof buf));
  EXPECT_EQ(std::string(buf, n), "old content");
  EXPECT_EQ(reader->info().etag, Md5Hex("old content"));
  EXPECT_THAT(Get(*volume_, "f"), gpuaas::testing::IsOkAndHolds(std::string("new")));
  EXPECT_EQ(volume_->Usage().files, 1);
  EXPECT_EQ(volume_->Usage().bytes, 3);
}

TEST_F(LocalVolumeTest, AnAbandonedWriteLeavesThePreviousContentAndNoTrace) {
  ASSERT_OK(Put(*volume_, "a/f", "previous"));
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<ObjectWriter> writer, volume_->Create("a/f", 100, ""));
    ASSERT_OK(writer->Write(std::string(60, 'x')));
    EXPECT_EQ(volume_->Usage().bytes, 8);
  }  // the client went away at 60 %
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<ObjectWriter> writer, volume_->Create("b/new", 10, ""));
    ASSERT_OK(writer->Write("12345"));
    EXPECT_THAT(writer->Commit(), StatusIs(absl::StatusCode::kFailedPrecondition,
                                           HasSubstr("5 bytes written, 10 announced")));
  }
  EXPECT_THAT(Get(*volume_, "a/f"), gpuaas::testing::IsOkAndHolds(std::string("previous")));
  EXPECT_THAT(volume_->Stat("b/new"), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_FALSE(std::filesystem::exists(VolumeDir() / "b"));
  EXPECT_TRUE(std::filesystem::is_empty(DataRoot() / "staging"));
  EXPECT_EQ(volume_->Usage().bytes, 8);
  EXPECT_EQ(volume_->Usage().files, 1);
}

TEST_F(LocalVolumeTest, WritingMoreThanAnnouncedIsRefused) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ObjectWriter> writer, volume_->Create("f", 4, ""));
  ASSERT_OK(writer->Write("abc"));
  EXPECT_THAT(writer->Write("de"), StatusIs(absl::StatusCode::kResourceExhausted,
                                            HasSubstr("more than the announced 4 bytes")));
  ASSERT_OK(writer->Write("d"));
  EXPECT_EQ(writer->Md5(), [] {
    Md5 md5;
    md5.Update("abcd");
    return md5.Digest();
  }());
  ASSERT_OK(writer->Commit());
  EXPECT_THAT(writer->Commit(), StatusIs(absl::StatusCode::kFailedPrecondition));
}

TEST_F(LocalVolumeTest, EmptyObjects) {
  ASSERT_OK_AND_ASSIGN(ObjectInfo put, Put(*volume_, "empty", ""));
  EXPECT_EQ(put.etag, "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_THAT(Get(*volume_, "empty"), gpuaas::testing::IsOkAndHolds(std::string()));
  EXPECT_EQ(volume_->Usage().files, 1);
}

TEST_F(LocalVolumeTest, DeleteRemovesTheFileAndEmptyParentsButNotOthers) {
  ASSERT_OK(Put(*volume_, "a/b/c/1", "1"));
  ASSERT_OK(Put(*volume_, "a/2", "22"));
  ASSERT_OK(volume_->Delete("a/b/c/1"));
  EXPECT_FALSE(std::filesystem::exists(VolumeDir() / "a/b"));
  EXPECT_TRUE(std::filesystem::exists(VolumeDir() / "a/2"));
  ASSERT_OK(volume_->Delete("a/2"));
  EXPECT_TRUE(std::filesystem::is_empty(VolumeDir()));
  EXPECT_TRUE(std::filesystem::exists(VolumeDir()));  // the root itself stays
  EXPECT_EQ(volume_->Usage().bytes, 0);
  EXPECT_EQ(volume_->Usage().files, 0);
  EXPECT_OK(volume_->Delete("a/2"));
}

TEST_F(LocalVolumeTest, CopyWithinTheVolume) {
  ASSERT_OK(Put(*volume_, "src/a", "some bytes", "text/plain"));
  ASSERT_OK_AND_ASSIGN(ObjectInfo copy, volume_->Copy("src/a", "dst/b/a"));
  EXPECT_EQ(copy.etag, Md5Hex("some bytes"));
  EXPECT_EQ(copy.content_type, "text/plain");
  EXPECT_THAT(Get(*volume_, "dst/b/a"), gpuaas::testing::IsOkAndHolds(std::string("some bytes")));
  EXPECT_EQ(volume_->Usage().files, 2);
  EXPECT_EQ(volume_->Usage().bytes, 20);
  // Onto itself, and over an existing object.
  ASSERT_OK(volume_->Copy("src/a", "src/a"));
  ASSERT_OK(Put(*volume_, "other", "0123456789012345"));
  ASSERT_OK(volume_->Copy("other", "dst/b/a"));
  EXPECT_EQ(volume_->Usage().files, 3);
  EXPECT_EQ(volume_->Usage().bytes, 10 + 16 + 16);
  EXPECT_THAT(volume_->Copy("missing", "x"), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(volume_->Copy("other", "../x"), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_F(LocalVolumeTest, CopyOfAFileChangedThroughTheMountHashesTheCopy) {
  ASSERT_OK(Put(*volume_, "f", "original"));
  WriteHostFile(VolumeDir() / "f", "changed by a workload");
  ASSERT_OK_AND_ASSIGN(ObjectInfo copy, volume_->Copy("f", "g"));
  EXPECT_EQ(copy.etag, Md5Hex("changed by a workload"));
  ASSERT_OK_AND_ASSIGN(ObjectInfo stat, volume_->Stat("g"));
  EXPECT_EQ(stat.etag, Md5Hex("changed by a workload"));
}

TEST_F(LocalVolumeTest, FilesChangedThroughTheMountNeverShowAStaleMd5) {
  ASSERT_OK_AND_ASSIGN(ObjectInfo put, Put(*volume_, "f", "uploaded"));
  // A workload appends in place: same inode, so the recorded ETag is still attached.
  {
    std::ofstream out(VolumeDir() / "f", std::ios::binary | std::ios::app);
    out << " and appended";
  }
  ASSERT_OK_AND_ASSIGN(ObjectInfo changed, volume_->Stat("f"));
  EXPECT_NE(changed.etag, put.etag);
  EXPECT_THAT(changed.etag, ::testing::EndsWith("-1"));  // not taken for an MD5 by clients
  ASSERT_OK_AND_ASSIGN(ObjectInfo again, volume_->Stat("f"));
  EXPECT_EQ(again.etag, changed.etag);  // stable while the file is

  // A file the workload created: no recorded ETag, no content type.
  WriteHostFile(VolumeDir() / "out/result.txt", "done");
  ASSERT_OK_AND_ASSIGN(ObjectInfo result, volume_->Stat("out/result.txt"));
  EXPECT_THAT(result.etag, ::testing::EndsWith("-1"));
  EXPECT_EQ(result.content_type, "");
  EXPECT_EQ(result.size, 4);
}

TEST_F(LocalVolumeTest, XattrsWorkHere) {
  // The ETags above rely on user xattrs; say so plainly if this file system lacks them.
  const std::filesystem::path probe = DataRoot() / "probe";
  WriteHostFile(probe, "x");
  EXPECT_EQ(::setxattr(probe.c_str(), "user.gpuaas.probe", "1", 1, 0), 0)
      << "user xattrs unsupported on " << DataRoot();
}

TEST_F(LocalVolumeTest, MetadataTakesNoDiskBlockOfItsOwn) {
  // 100,000 small files with a 4 KiB xattr block each would take more disk than their data.
  ASSERT_OK(Put(*volume_, "with-meta", std::string(10'000, 'x'), "application/octet-stream"));
  WriteHostFile(VolumeDir() / "plain", std::string(10'000, 'x'));
  struct stat with_meta, plain;
  ASSERT_EQ(::stat((VolumeDir() / "with-meta").c_str(), &with_meta), 0);
  ASSERT_EQ(::stat((VolumeDir() / "plain").c_str(), &plain), 0);
  EXPECT_EQ(with_meta.st_blocks, plain.st_blocks);
}

TEST_F(LocalVolumeTest, RecountSeesWhatAWorkloadWrote) {
  ASSERT_OK(Put(*volume_, "a", "12345"));
  WriteHostFile(VolumeDir() / "w/1", std::string(100, 'x'));
  WriteHostFile(VolumeDir() / "w/deep/2", std::string(50, 'y'));
  std::filesystem::create_symlink("/etc/passwd", VolumeDir() / "w/link");
  EXPECT_EQ(volume_->Usage().files, 1);  // not seen until a recount
  ASSERT_OK_AND_ASSIGN(VolumeUsage usage, backend_->Recount("vol"));
  EXPECT_EQ(usage.files, 3);
  EXPECT_EQ(usage.bytes, 155);
  EXPECT_EQ(volume_->Usage().files, 3);
  EXPECT_EQ(volume_->Usage().bytes, 155);
  // A fresh backend counts the same at first open.
  OpenBackend();
  EXPECT_EQ(volume_->Usage().files, 3);
  EXPECT_EQ(volume_->Usage().bytes, 155);
}

TEST_F(LocalVolumeTest, ContentTypeTooLongIsRefused) {
  EXPECT_THAT(volume_->Create("f", 1, std::string(2000, 'x')),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("content_type")));
  EXPECT_THAT(volume_->Create("f", -1, ""),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("size")));
}

TEST_F(LocalVolumeTest, SyncedWritesWork) {
  OpenBackend(/*sync_writes=*/true);
  ASSERT_OK(Put(*volume_, "a/b/c", "durable"));
  EXPECT_THAT(Get(*volume_, "a/b/c"), gpuaas::testing::IsOkAndHolds(std::string("durable")));
  ASSERT_OK(volume_->Delete("a/b/c"));
}

}  // namespace
}  // namespace gpuaas::storage::local
