#include "services/proxy/access_activity.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace gpuaas::proxy {
namespace {

TEST(AccessActivity, ReportsEachInstanceOnceAndKeepsWhatFailedToGo) {
  std::vector<std::vector<std::string>> sent;
  absl::Status next = absl::UnavailableError("instance service down");
  AccessActivity activity([&](const std::vector<std::string>& ids) {
    std::vector<std::string> sorted = ids;
    std::sort(sorted.begin(), sorted.end());
    sent.push_back(sorted);
    return next;
  });
  EXPECT_TRUE(activity.Flush().ok());  // nothing noted: nothing sent
  EXPECT_TRUE(sent.empty());
  activity.Note("web-1");
  activity.Note("web-1");
  activity.Note("web-2");
  EXPECT_FALSE(activity.Flush().ok());
  next = absl::OkStatus();
  activity.Note("web-3");
  EXPECT_TRUE(activity.Flush().ok());
  EXPECT_TRUE(activity.Flush().ok());
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0], (std::vector<std::string>{"web-1", "web-2"}));
  EXPECT_EQ(sent[1], (std::vector<std::string>{"web-1", "web-2", "web-3"}));
}

}  // namespace
}  // namespace gpuaas::proxy
