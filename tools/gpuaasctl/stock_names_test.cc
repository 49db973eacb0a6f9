#include "tools/gpuaasctl/stock_names.h"

#include <gtest/gtest.h>

#include "libs/testing/status_matchers.h"

namespace gpuaas::ctl {
namespace {

namespace pb = ::gpuaas::stock::v1;
using ::gpuaas::testing::IsOkAndHolds;
using ::gpuaas::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(ParseStockStateTest, NamesAsTypedAndAsJsonPrintsThem) {
  EXPECT_THAT(ParseStockState("--state", "available"), IsOkAndHolds(pb::STOCK_STATE_AVAILABLE));
  EXPECT_THAT(ParseStockState("--state", "claimed"), IsOkAndHolds(pb::STOCK_STATE_CLAIMED));
  EXPECT_THAT(ParseStockState("--state", "unavailable"), IsOkAndHolds(pb::STOCK_STATE_UNAVAILABLE));
  EXPECT_THAT(ParseStockState("--state", "deleting"), IsOkAndHolds(pb::STOCK_STATE_DELETING));
  EXPECT_THAT(ParseStockState("--state", "Claimed"), IsOkAndHolds(pb::STOCK_STATE_CLAIMED));
  EXPECT_THAT(ParseStockState("--state", "STOCK_STATE_DELETING"),
              IsOkAndHolds(pb::STOCK_STATE_DELETING));
}

TEST(ParseStockStateTest, UnknownNamesTheFlagAndTheChoices) {
  for (const char* bad : {"init", "", "unspecified", "stock_state_unspecified", "0"}) {
    SCOPED_TRACE(bad);
    auto got = ParseStockState("--state", bad);
    EXPECT_THAT(got, StatusIs(absl::StatusCode::kInvalidArgument,
                              HasSubstr("available, claimed, unavailable or deleting")));
    EXPECT_THAT(std::string(got.status().message()), StartsWith("--state: "));
  }
}

TEST(StockStateNameTest, RoundTrips) {
  for (StockState s : {pb::STOCK_STATE_AVAILABLE, pb::STOCK_STATE_CLAIMED,
                       pb::STOCK_STATE_UNAVAILABLE, pb::STOCK_STATE_DELETING}) {
    EXPECT_THAT(ParseStockState("--state", StockStateName(s)), IsOkAndHolds(s));
  }
  EXPECT_EQ(StockStateName(pb::STOCK_STATE_UNSPECIFIED), "");
  EXPECT_EQ(StockStateName(static_cast<StockState>(42)), "42");
}

TEST(NodeStatusNameTest, StateAndCordon) {
  EXPECT_EQ(NodeStatusName(pb::NODE_STATE_READY, false), "ready");
  EXPECT_EQ(NodeStatusName(pb::NODE_STATE_NOT_READY, false), "not-ready");
  EXPECT_EQ(NodeStatusName(pb::NODE_STATE_READY, true), "ready,cordoned");
  EXPECT_EQ(NodeStatusName(pb::NODE_STATE_UNSPECIFIED, false), "unknown");
}

}  // namespace
}  // namespace gpuaas::ctl
