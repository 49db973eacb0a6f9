// Stock and node states as users type them (`available`, `not-ready` ...) and as gpuaasctl
// prints them.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "gpuaas/stock/v1/stock.pb.h"

namespace gpuaas::ctl {

using StockState = ::gpuaas::stock::v1::StockState;
using NodeState = ::gpuaas::stock::v1::NodeState;

// available, claimed, unavailable, deleting. Case-insensitive, and the enum's own spelling
// (STOCK_STATE_CLAIMED, as `-o json` prints it) works too. Error: INVALID_ARGUMENT naming
// `flag` and listing the valid names.
absl::StatusOr<StockState> ParseStockState(std::string_view flag, std::string_view name);

// `available` ...; "" for UNSPECIFIED, the number for values this build does not know.
std::string StockStateName(StockState state);

// `ready`, `not-ready`, with `,cordoned` when the node takes no new stocks.
std::string NodeStatusName(NodeState state, bool cordoned);

}  // namespace gpuaas::ctl
