// The fixture the stock integration tests share: a database, auth, one stock replica, the
// admin's and a service user's tokens, and short-hands for the RPCs the tests repeat.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "tests/auth/auth_stack.h"
#include "tests/stock/stock_stack.h"

namespace gpuaas::stock::testing {

class StockTest : public auth::testing::AuthStackTest {
 protected:
  void SetUp() override;
  void TearDown() override;
  virtual StockStackOptions Options() { return {}; }

  grpc::Status CreateSpec(const pb::Spec& spec);
  // RegisterNode as the node's own agent (AuthStack::AgentToken).
  grpc::Status Register(const pb::Node& node, StockStack* on = nullptr);
  grpc::Status CreateStocks(const std::string& spec, int number, pb::CreateStocksResponse* out,
                            const std::string& operation_id = "", bool allow_partial = false,
                            StockStack* on = nullptr);
  grpc::Status DeleteStocks(const std::string& spec, int number, pb::DeleteStocksResponse* out,
                            const std::string& operation_id = "", StockStack* on = nullptr);
  grpc::Status Claim(const std::string& spec, const std::string& instance, pb::Stock* out,
                     StockStack* on = nullptr);
  grpc::Status Release(const std::string& instance, pb::ReleaseStockResponse* out = nullptr);
  pb::StockCount Summary(const std::string& spec);
  // Opens a Heartbeat stream as `token`, sends `beats` in turn reading each answer, closes it;
  // returns the stream's final status and the answers.
  grpc::Status Heartbeats(const std::string& token, const std::vector<pb::HeartbeatRequest>& beats,
                          std::vector<pb::HeartbeatResponse>* answers = nullptr);

  // Node/GPU allocations beyond capacity, found by SQL independent of the service's code:
  // one line per offending node or GPU; empty when none.
  std::vector<std::string> Overbooked();

  std::unique_ptr<StockStack> stock_;
  std::string service_;  // a ROLE_SERVICE user's token
};

}  // namespace gpuaas::stock::testing
