#include "tests/stock/stock_test_base.h"

namespace gpuaas::stock::testing {

void StockTest::SetUp() {
  AuthStackTest::SetUp();
  if (IsSkipped()) return;
  stock_ = std::make_unique<StockStack>(dsn(), stack_->address(), Options());
  stack_->CreateServiceUser("robot");
  service_ = stack_->Login("robot", auth::testing::AuthStack::PasswordOf("robot"));
}

void StockTest::TearDown() {
  stock_.reset();
  AuthStackTest::TearDown();
}

grpc::Status StockTest::CreateSpec(const pb::Spec& spec) {
  pb::CreateSpecRequest req;
  *req.mutable_spec() = spec;
  pb::Spec out;
  return stock_->stub().CreateSpec(Ctx(admin_).get(), req, &out);
}

grpc::Status StockTest::Register(const pb::Node& node, StockStack* on) {
  pb::RegisterNodeRequest req;
  *req.mutable_node() = node;
  pb::RegisterNodeResponse out;
  return (on ? on : stock_.get())
      ->agent_stub()
      .RegisterNode(Ctx(stack_->AgentToken(node.node_id())).get(), req, &out);
}

grpc::Status StockTest::CreateStocks(const std::string& spec, int number,
                                     pb::CreateStocksResponse* out, const std::string& operation_id,
                                     bool allow_partial, StockStack* on) {
  pb::CreateStocksRequest req;
  req.set_spec_name(spec);
  req.set_number(number);
  req.set_operation_id(operation_id);
  req.set_allow_partial(allow_partial);
  pb::CreateStocksResponse ignored;
  return (on ? on : stock_.get())
      ->stub()
      .CreateStocks(Ctx(admin_).get(), req, out ? out : &ignored);
}

grpc::Status StockTest::DeleteStocks(const std::string& spec, int number,
                                     pb::DeleteStocksResponse* out, const std::string& operation_id,
                                     StockStack* on) {
  pb::DeleteStocksRequest req;
  req.set_spec_name(spec);
  req.set_number(number);
  req.set_operation_id(operation_id);
  pb::DeleteStocksResponse ignored;
  return (on ? on : stock_.get())
      ->stub()
      .DeleteStocks(Ctx(admin_).get(), req, out ? out : &ignored);
}

grpc::Status StockTest::Claim(const std::string& spec, const std::string& instance, pb::Stock* out,
                              StockStack* on) {
  pb::ClaimStockRequest req;
  req.set_spec_name(spec);
  req.set_instance_id(instance);
  pb::Stock ignored;
  return (on ? on : stock_.get())
      ->stub()
      .ClaimStock(Ctx(service_).get(), req, out ? out : &ignored);
}

grpc::Status StockTest::Release(const std::string& instance, pb::ReleaseStockResponse* out) {
  pb::ReleaseStockRequest req;
  req.set_instance_id(instance);
  pb::ReleaseStockResponse ignored;
  return stock_->stub().ReleaseStock(Ctx(service_).get(), req, out ? out : &ignored);
}

pb::StockCount StockTest::Summary(const std::string& spec) {
  pb::GetStockSummaryRequest req;
  req.set_spec_name(spec);
  pb::GetStockSummaryResponse out;
  grpc::Status s = stock_->stub().GetStockSummary(Ctx(admin_).get(), req, &out);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return out.counts().empty() ? pb::StockCount{} : out.counts(0);
}

grpc::Status StockTest::Heartbeats(const std::string& token,
                                   const std::vector<pb::HeartbeatRequest>& beats,
                                   std::vector<pb::HeartbeatResponse>* answers) {
  auto ctx = Ctx(token);
  auto stream = stock_->agent_stub().Heartbeat(ctx.get());
  for (const pb::HeartbeatRequest& beat : beats) {
    pb::HeartbeatResponse answer;
    if (!stream->Write(beat) || !stream->Read(&answer)) break;
    if (answers) answers->push_back(answer);
  }
  stream->WritesDone();
  return stream->Finish();
}

std::vector<std::string> StockTest::Overbooked() {
  // Written apart from the service's SQL on purpose: it checks the tables, not the code.
  constexpr std::string_view kOverbooked =
      "SELECT 'node ' || n.node_id FROM stock.nodes n JOIN ("
      "  SELECT node_id, sum(cpu_millis) AS c, sum(memory_bytes) AS m, sum(disk_bytes) AS d"
      "  FROM stock.stocks GROUP BY node_id) s ON s.node_id = n.node_id"
      " WHERE s.c > n.cpu_millis OR s.m > n.memory_bytes OR s.d > n.disk_bytes "
      "UNION ALL SELECT 'gpu ' || node_id || '/' || gpu_index FROM stock.stock_gpus"
      " GROUP BY node_id, gpu_index"
      " HAVING sum(milli) > 1000 OR (count(*) > 1 AND max(milli) = 1000) "
      "UNION ALL SELECT 'mig ' || a.stock_id || ' overlaps ' || b.stock_id"
      " FROM stock.stocks a JOIN stock.stock_gpus ag ON ag.stock_id = a.stock_id"
      " JOIN stock.stock_gpus bg ON bg.node_id = ag.node_id AND bg.gpu_index = ag.gpu_index"
      " JOIN stock.stocks b ON b.stock_id = bg.stock_id"
      " WHERE a.stock_id < b.stock_id AND a.mig_slices > 0 AND b.mig_slices > 0"
      " AND a.mig_start_slice < b.mig_start_slice + b.mig_slices"
      " AND b.mig_start_slice < a.mig_start_slice + a.mig_slices "
      "UNION ALL SELECT 'instance ' || instance_id FROM stock.stocks"
      " WHERE instance_id IS NOT NULL GROUP BY instance_id HAVING count(*) > 1";
  std::vector<std::string> out;
  EXPECT_TRUE(stock_->pool()
                  .RunInTransaction("test.overbooked",
                                    [&](db::Tx& tx) {
                                      out = tx.Exec(kOverbooked).Map([](const db::Row& r) {
                                        return r.Get<std::string>(0);
                                      });
                                      return absl::OkStatus();
                                    })
                  .ok());
  return out;
}

}  // namespace gpuaas::stock::testing
