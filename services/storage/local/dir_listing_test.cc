// The sorted-directory cache: hits while a directory is unchanged, misses after any change,
// whether made by the backend or behind its back.
#include "services/storage/local/dir_listing.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <filesystem>

#include "libs/common/errno_status.h"
#include "libs/common/unique_fd.h"
#include "libs/testing/status_matchers.h"
#include "libs/testing/temp_dir.h"
#include "services/storage/local/local_test_util.h"

namespace gpuaas::storage::local {
namespace {

std::vector<std::string> Names(const DirEntries& entries) {
  std::vector<std::string> names;
  for (const DirEntry& e : entries) {
    names.push_back(e.sort_name);
  }
  return names;
}

class DirListingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteHostFile(temp_.path() / "a0", "");
    WriteHostFile(temp_.path() / "a.b", "");
    WriteHostFile(temp_.path() / "a/x", "");
    std::filesystem::create_symlink("/etc", temp_.path() / "link");
    Age();
    fd_ = UniqueFd(::open(temp_.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    ASSERT_TRUE(fd_.valid());
  }
  // Makes the directory look long settled, so that its listing may be cached.
  void Age() {
    const timespec hour_ago[2] = {{::time(nullptr) - 3600, 0}, {::time(nullptr) - 3600, 0}};
    ASSERT_EQ(::utimensat(AT_FDCWD, temp_.path().c_str(), hour_ago, 0), 0);
  }

  testing::TempDir temp_;
  UniqueFd fd_;
};

TEST_F(DirListingTest, SortedWithDirectoriesAsNameSlashAndNoSymlinks) {
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const DirEntries> entries, ReadSortedDir(fd_.get()));
  EXPECT_THAT(Names(*entries), ::testing::ElementsAre("a.b", "a/", "a0"));
  EXPECT_TRUE((*entries)[1].is_dir);
  EXPECT_EQ((*entries)[1].name(), "a");
}

TEST_F(DirListingTest, CachedUntilTheDirectoryChanges) {
  DirListingCache cache(/*min_entries=*/1);
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const DirEntries> first, cache.Get("", fd_.get()));
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const DirEntries> second, cache.Get("", fd_.get()));
  EXPECT_EQ(first, second);

  // Behind the cache's back, as a workload would.
  WriteHostFile(temp_.path() / "b", "");
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const DirEntries> third, cache.Get("", fd_.get()));
  EXPECT_NE(third, first);
  EXPECT_THAT(Names(*third), ::testing::ElementsAre("a.b", "a/", "a0", "b"));

  // Freshly changed: read, but not kept.
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const DirEntries> fourth, cache.Get("", fd_.get()));
  EXPECT_NE(fourth, third);

  Age();
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const DirEntries> fifth, cache.Get("", fd_.get()));
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const DirEntries> sixth, cache.Get("", fd_.get()));
  EXPECT_EQ(fifth, sixth);
  cache.Invalidate("");
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const DirEntries> seventh, cache.Get("", fd_.get()));
  EXPECT_NE(seventh, sixth);
}

TEST_F(DirListingTest, SmallDirectoriesAreNotKeptAndTheTotalIsBounded) {
  DirListingCache small_only(/*min_entries=*/100);
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const DirEntries> a, small_only.Get("", fd_.get()));
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<const DirEntries> b, small_only.Get("", fd_.get()));
  EXPECT_NE(a, b);
  DirListingCache tiny(/*min_entries=*/1, /*max_total_entries=*/2);
  ASSERT_OK_AND_ASSIGN(a, tiny.Get("", fd_.get()));
  ASSERT_OK_AND_ASSIGN(b, tiny.Get("", fd_.get()));
  EXPECT_NE(a, b);  // three entries never fit in two
}

}  // namespace
}  // namespace gpuaas::storage::local
