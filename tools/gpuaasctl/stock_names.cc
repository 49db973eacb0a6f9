#include "tools/gpuaasctl/stock_names.h"

#include <array>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"

namespace gpuaas::ctl {
namespace {

namespace pb = ::gpuaas::stock::v1;

constexpr std::array<std::pair<std::string_view, StockState>, 4> kStockStates = {{
    {"available", pb::STOCK_STATE_AVAILABLE},
    {"claimed", pb::STOCK_STATE_CLAIMED},
    {"unavailable", pb::STOCK_STATE_UNAVAILABLE},
    {"deleting", pb::STOCK_STATE_DELETING},
}};

}  // namespace

absl::StatusOr<StockState> ParseStockState(std::string_view flag, std::string_view name) {
  std::string normal = absl::StrReplaceAll(absl::AsciiStrToLower(absl::StripAsciiWhitespace(
                                               absl::string_view(name.data(), name.size()))),
                                           {{"-", "_"}});
  absl::string_view unprefixed = normal;
  if (absl::ConsumePrefix(&unprefixed, "stock_state_")) {
    normal = std::string(unprefixed);
  }
  for (const auto& [n, state] : kStockStates) {
    if (normal == n) {
      return state;
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat(std::string(flag), ": unknown stock state \"", std::string(name),
                   "\": want available, claimed, unavailable or deleting"));
}

std::string StockStateName(StockState state) {
  if (state == pb::STOCK_STATE_UNSPECIFIED) {
    return "";
  }
  for (const auto& [n, s] : kStockStates) {
    if (s == state) {
      return std::string(n);
    }
  }
  return absl::StrCat(static_cast<int>(state));
}

std::string NodeStatusName(NodeState state, bool cordoned) {
  std::string out;
  switch (state) {
    case pb::NODE_STATE_READY:
      out = "ready";
      break;
    case pb::NODE_STATE_NOT_READY:
      out = "not-ready";
      break;
    case pb::NODE_STATE_UNSPECIFIED:
      out = "unknown";
      break;
    default:
      out = absl::StrCat(static_cast<int>(state));
      break;
  }
  if (cordoned) {
    absl::StrAppend(&out, ",cordoned");
  }
  return out;
}

}  // namespace gpuaas::ctl
