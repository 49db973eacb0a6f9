// Listing: byte order of keys across directories, prefix, delimiter, paging, start_after.
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <vector>

#include "services/storage/local/local_test_util.h"

namespace gpuaas::storage::local {
namespace {

using ::gpuaas::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::IsEmpty;

std::vector<std::string> Keys(const ListResult& result) {
  std::vector<std::string> keys;
  for (const ObjectInfo& o : result.objects) {
    keys.push_back(o.key);
  }
  return keys;
}

class ListerTest : public LocalBackendTest {
 protected:
  void PutAll(const std::vector<std::string>& keys) {
    for (const std::string& key : keys) {
      ASSERT_OK(Put(*volume_, key, key));
    }
  }
  // Every page of `request` (max_keys as given), following next_start_after; objects and
  // prefixes in the order returned.
  std::vector<std::string> AllPages(ListRequest request, int* pages = nullptr) {
    std::vector<std::string> out;
    int n = 0;
    while (true) {
      absl::StatusOr<ListResult> page = volume_->List(request);
      EXPECT_OK(page);
      if (!page.ok()) {
        break;
      }
      ++n;
      EXPECT_LE(static_cast<int>(page->objects.size() + page->common_prefixes.size()),
                request.max_keys);
      // Objects and prefixes each come sorted; merged they are the page in order.
      std::vector<std::string> merged = Keys(*page);
      merged.insert(merged.end(), page->common_prefixes.begin(), page->common_prefixes.end());
      std::sort(merged.begin(), merged.end());
      out.insert(out.end(), merged.begin(), merged.end());
      if (!page->truncated) {
        EXPECT_TRUE(page->next_start_after.empty());
        break;
      }
      EXPECT_EQ(page->next_start_after, merged.back());
      request.start_after = page->next_start_after;
    }
    if (pages != nullptr) {
      *pages = n;
    }
    return out;
  }
};

TEST_F(ListerTest, ByteOrderAcrossDirectoriesWithTrickyNames) {
  std::vector<std::string> keys = {"a-b", "a/b", "a.b", "a0", "a",     "a/b/c", "a/a",
                                   "b",   "a/-", "A",   "a~", "a/b.c", "a/b0"};
  // "a" can be a file and "a/..." keys cannot coexist on a file system: drop "a" and "a/b".
  keys.erase(std::find(keys.begin(), keys.end(), "a"));
  keys.erase(std::find(keys.begin(), keys.end(), "a/b"));
  PutAll(keys);
  std::vector<std::string> expected = keys;
  std::sort(expected.begin(), expected.end());
  ASSERT_OK_AND_ASSIGN(ListResult all, volume_->List(ListRequest{}));
  EXPECT_THAT(Keys(all), ElementsAreArray(expected));
  EXPECT_FALSE(all.truncated);
  for (int max_keys : {1, 2, 3, 5}) {
    EXPECT_THAT(AllPages(ListRequest{.max_keys = max_keys}), ElementsAreArray(expected))
        << max_keys;
  }
  // Sizes, ETags and mtimes come with the listing.
  EXPECT_EQ(all.objects[0].size, static_cast<int64_t>(all.objects[0].key.size()));
  ASSERT_OK_AND_ASSIGN(ObjectInfo stat, volume_->Stat(all.objects[0].key));
  EXPECT_EQ(all.objects[0].etag, stat.etag);
  EXPECT_EQ(all.objects[0].modify_time, stat.modify_time);
}

TEST_F(ListerTest, PrefixAndDelimiter) {
  PutAll({"photos/2024/jan/1.jpg", "photos/2024/feb/2.jpg", "photos/2024.txt", "photos/2025/x",
          "photos/readme", "photosynthesis", "videos/v.mp4", "top"});
  ASSERT_OK_AND_ASSIGN(ListResult root, volume_->List(ListRequest{.delimiter = "/"}));
  EXPECT_THAT(Keys(root), ElementsAre("photosynthesis", "top"));
  EXPECT_THAT(root.common_prefixes, ElementsAre("photos/", "videos/"));

  ASSERT_OK_AND_ASSIGN(ListResult photos,
                       volume_->List(ListRequest{.prefix = "photos/", .delimiter = "/"}));
  EXPECT_THAT(Keys(photos), ElementsAre("photos/2024.txt", "photos/readme"));
  EXPECT_THAT(photos.common_prefixes, ElementsAre("photos/2024/", "photos/2025/"));

  ASSERT_OK_AND_ASSIGN(ListResult partial,
                       volume_->List(ListRequest{.prefix = "photos/202", .delimiter = "/"}));
  EXPECT_THAT(Keys(partial), ElementsAre("photos/2024.txt"));
  EXPECT_THAT(partial.common_prefixes, ElementsAre("photos/2024/", "photos/2025/"));

  ASSERT_OK_AND_ASSIGN(ListResult flat, volume_->List(ListRequest{.prefix = "photos/2024"}));
  EXPECT_THAT(Keys(flat),
              ElementsAre("photos/2024.txt", "photos/2024/feb/2.jpg", "photos/2024/jan/1.jpg"));
  ASSERT_OK_AND_ASSIGN(ListResult photo, volume_->List(ListRequest{.prefix = "photo"}));
  EXPECT_EQ(photo.objects.size(), 6u);

  // Prefixes that no key can have, or that lead nowhere.
  for (std::string prefix : {"nope/", "top/", "top/x", "../", "photos//", "photos/./", "zzz"}) {
    ASSERT_OK_AND_ASSIGN(ListResult none, volume_->List(ListRequest{.prefix = prefix}));
    EXPECT_THAT(none.objects, IsEmpty()) << prefix;
  }
  // Paged with a delimiter: prefixes count as keys, and continuing after one skips its contents.
  EXPECT_THAT(AllPages(ListRequest{.prefix = "photos/", .delimiter = "/", .max_keys = 1}),
              ElementsAre("photos/2024.txt", "photos/2024/", "photos/2025/", "photos/readme"));
}

TEST_F(ListerTest, EmptyDirectoriesAreNoCommonPrefixes) {
  PutAll({"a/file"});
  std::filesystem::create_directories(VolumeDir() / "empty/deeper/still");
  ASSERT_OK_AND_ASSIGN(ListResult root, volume_->List(ListRequest{.delimiter = "/"}));
  EXPECT_THAT(root.common_prefixes, ElementsAre("a/"));
  ASSERT_OK_AND_ASSIGN(ListResult flat, volume_->List(ListRequest{}));
  EXPECT_THAT(Keys(flat), ElementsAre("a/file"));
}

TEST_F(ListerTest, InvalidRequests) {
  EXPECT_THAT(volume_->List(ListRequest{.delimiter = ","}),
              StatusIs(absl::StatusCode::kInvalidArgument, ::testing::HasSubstr("delimiter")));
  EXPECT_THAT(volume_->List(ListRequest{.max_keys = 0}),
              StatusIs(absl::StatusCode::kInvalidArgument, ::testing::HasSubstr("max_keys")));
  EXPECT_THAT(volume_->List(ListRequest{.max_keys = 1001}),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_F(ListerTest, ThousandsOfFilesPagedWithPrefixesAndStartAfter) {
  std::vector<std::string> keys;
  for (int d = 0; d < 12; ++d) {
    for (int s = 0; s < 4; ++s) {
      for (int f = 0; f < 50; ++f) {
        keys.push_back(absl::StrCat("d", d, "/s", s, "/f", f, ".bin"));
      }
    }
    keys.push_back(absl::StrCat("d", d, "-file"));
    keys.push_back(absl::StrCat("d", d, "/s-file"));
  }
  PutAll(keys);
  std::vector<std::string> expected = keys;
  std::sort(expected.begin(), expected.end());
  int pages = 0;
  EXPECT_THAT(AllPages(ListRequest{.max_keys = 1000}, &pages), ElementsAreArray(expected));
  EXPECT_EQ(pages, static_cast<int>((expected.size() + 999) / 1000));
  EXPECT_THAT(AllPages(ListRequest{.max_keys = 333}), ElementsAreArray(expected));

  // start_after anywhere: in the middle of nested directories, at a directory's own name, at
  // keys that do not exist, before and after everything.
  for (const std::string& after :
       {std::string("d3/s2/f17.bin"), std::string("d3/s2/"), std::string("d3/s2"),
        std::string("d3/s2/f17"), std::string("d10/s0/f0.bin"), std::string("d1"),
        std::string("d11/s3/zzz"), std::string(""), std::string("A"), std::string("e")}) {
    std::vector<std::string> want;
    for (const std::string& k : expected) {
      if (k > after) {
        want.push_back(k);
      }
    }
    ListRequest request{.max_keys = 250};
    request.start_after = after;
    EXPECT_THAT(AllPages(request), ElementsAreArray(want)) << after;
  }

  // Prefix plus start_after, with and without delimiter.
  ListRequest in_dir{.prefix = "d7/s1/", .max_keys = 7};
  in_dir.start_after = "d7/s1/f3.bin";
  std::vector<std::string> want;
  for (const std::string& k : expected) {
    if (k.rfind("d7/s1/", 0) == 0 && k > in_dir.start_after) {
      want.push_back(k);
    }
  }
  EXPECT_THAT(AllPages(in_dir), ElementsAreArray(want));
  ListRequest dirs{.prefix = "d7/", .delimiter = "/", .max_keys = 2};
  dirs.start_after = "d7/s0/";
  // "d7/s-file" sorts before "d7/s0/" ('-' < '0'), so it is behind start_after too.
  EXPECT_THAT(AllPages(dirs), ElementsAre("d7/s1/", "d7/s2/", "d7/s3/"));
}

TEST_F(ListerTest, ChangesAreSeenBetweenPages) {
  std::vector<std::string> keys;
  for (int i = 0; i < 600; ++i) {
    keys.push_back(absl::StrCat("big/", 1000 + i));
  }
  PutAll(keys);
  // Old enough for its listing to be cached (a fresh directory's is not).
  const timespec hour_ago[2] = {{::time(nullptr) - 3600, 0}, {::time(nullptr) - 3600, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, (VolumeDir() / "big").c_str(), hour_ago, 0), 0);
  ASSERT_OK_AND_ASSIGN(ListResult first, volume_->List(ListRequest{.max_keys = 100}));
  ASSERT_OK(volume_->Delete("big/1150"));
  ASSERT_OK(Put(*volume_, "big/1150x", "new"));
  // A workload writes through its mount: no call of ours tells the listing.
  WriteHostFile(VolumeDir() / "big/1160y", "from the workload");
  ListRequest next{.max_keys = 100};
  next.start_after = first.next_start_after;
  ASSERT_OK_AND_ASSIGN(ListResult second, volume_->List(next));
  std::vector<std::string> got = Keys(second);
  EXPECT_EQ(std::count(got.begin(), got.end(), "big/1150"), 0);
  EXPECT_EQ(std::count(got.begin(), got.end(), "big/1150x"), 1);
  EXPECT_EQ(std::count(got.begin(), got.end(), "big/1160y"), 1);
}

}  // namespace
}  // namespace gpuaas::storage::local
