// What `-o table` prints for the stock service's resources: specs, stocks, their counts, and
// nodes with their GPUs. Every cell but a trailing free-text one is one word, so awk and cut
// work on the rows (output.h's Table puts "-" in empty cells).
#pragma once

#include <string>

#include "gpuaas/stock/v1/stock.pb.h"

namespace gpuaas::ctl {

namespace stockpb = ::gpuaas::stock::v1;

// SPEC GPU CPU MEMORY DISK PRICE/H CURRENCY DEPRECATED CREATED DESCRIPTION; GPU is one word:
// "2xA100-80GB", a share "0.25xT4", a MIG slice "1xA100-80GB:3g.40gb".
std::string SpecTable(const google::protobuf::RepeatedPtrField<stockpb::Spec>& specs);

// STOCK SPEC NODE STATE GPUS MIG INSTANCE CREATED; GPUS are the UUIDs, comma-separated.
std::string StockTable(const google::protobuf::RepeatedPtrField<stockpb::Stock>& stocks);

// SPEC TOTAL AVAILABLE CLAIMED UNAVAILABLE DELETING.
std::string StockSummaryTable(const stockpb::GetStockSummaryResponse& summary);

// "placed: 3 of 10", the shortfall reason when fewer than `asked` were placed, the operation id
// (to retry a run cut short without placing twice), then the placed stocks.
std::string CreateStocksText(const stockpb::CreateStocksResponse& resp, int asked,
                             const std::string& operation_id);

// "deleted: 2 of 5", why fewer when fewer, the operation id, then the deleted stock ids.
std::string DeleteStocksText(const stockpb::DeleteStocksResponse& resp, int asked,
                             const std::string& operation_id);

// NODE HOSTNAME STATUS GPUS UNHEALTHY CPU MEMORY DISK AGENT HEARTBEAT; GPUS as
// "8xA100-80GB" (mixed nodes: "4xA100-80GB,2xT4").
std::string NodeTable(const google::protobuf::RepeatedPtrField<stockpb::Node>& nodes);

// The node's fields, then one row per GPU: INDEX UUID MODEL MEMORY MIG HEALTH LAST XID UTIL
// MEM USED TEMP POWER (the readings of the last heartbeat).
std::string NodeDetail(const stockpb::Node& node);

// A one-row table of `item` with `table`: for commands that answer with one resource.
template <class T>
std::string OneRow(const T& item,
                   std::string (*table)(const google::protobuf::RepeatedPtrField<T>&)) {
  google::protobuf::RepeatedPtrField<T> one;
  *one.Add() = item;
  return table(one);
}

}  // namespace gpuaas::ctl
