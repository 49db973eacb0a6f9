// 100,000 files in one directory, counted against the file limit and listed page by page
// (1,000 a page). Slow by design (label "slow"); prints its timings rather than asserting on
// them: tests never assert on wall-clock speed.
#include <chrono>
#include <cstdio>

#include "services/storage/local/local_test_util.h"

namespace gpuaas::storage::local {
namespace {

using ::gpuaas::testing::StatusIs;
using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

using Listing100kTest = LocalBackendTest;

TEST_F(Listing100kTest, OneHundredThousandFilesPagedByAThousand) {
  constexpr int kFiles = 100'000;
  ASSERT_OK_AND_ASSIGN(volume_,
                       backend_->OpenVolume("vol", VolumeLimits{int64_t{1} << 30, kFiles}));
  const auto write_start = Clock::now();
  for (int i = 0; i < kFiles; ++i) {
    ASSERT_OK(Put(*volume_, absl::StrCat("lora/dataset/img_", i, ".txt"), "caption"));
  }
  const double write_seconds = Seconds(write_start);
  EXPECT_THAT(volume_->Create("lora/dataset/one_too_many", 1, ""),
              StatusIs(absl::StatusCode::kResourceExhausted));
  EXPECT_EQ(volume_->Usage().files, kFiles);

  for (int pass = 1; pass <= 2; ++pass) {
    ListRequest request{.prefix = "lora/dataset/", .max_keys = 1000};
    int pages = 0;
    int64_t seen = 0;
    std::string last;
    double slowest = 0;
    const auto start = Clock::now();
    while (true) {
      const auto page_start = Clock::now();
      ASSERT_OK_AND_ASSIGN(ListResult page, volume_->List(request));
      slowest = std::max(slowest, Seconds(page_start));
      ++pages;
      for (const ObjectInfo& object : page.objects) {
        ASSERT_LT(last, object.key);
        last = object.key;
        ++seen;
      }
      if (!page.truncated) {
        break;
      }
      request.start_after = page.next_start_after;
    }
    const double total = Seconds(start);
    EXPECT_EQ(seen, kFiles);
    EXPECT_EQ(pages, kFiles / 1000);
    std::printf("listing pass %d: %d pages, %lld keys in %.2f s (%.1f ms/page, slowest %.1f ms)\n",
                pass, pages, static_cast<long long>(seen), total, 1000 * total / pages,
                1000 * slowest);
  }
  std::printf("writing %d files: %.2f s (%.0f files/s)\n", kFiles, write_seconds,
              kFiles / write_seconds);

  const auto recount_start = Clock::now();
  ASSERT_OK_AND_ASSIGN(VolumeUsage usage, backend_->Recount("vol"));
  std::printf("recount of %lld files: %.2f s\n", static_cast<long long>(usage.files),
              Seconds(recount_start));
  EXPECT_EQ(usage.files, kFiles);

  ASSERT_OK_AND_ASSIGN(ListResult top,
                       volume_->List(ListRequest{.prefix = "lora/", .delimiter = "/"}));
  EXPECT_THAT(top.common_prefixes, ::testing::ElementsAre("lora/dataset/"));
}

}  // namespace
}  // namespace gpuaas::storage::local
