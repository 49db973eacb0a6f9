// The real gpuaasctl binary against the real gpuaas-auth, gpuaas-stock and gpuaas-storage
// binaries on PostgreSQL: log in once, then drive specs, stocks, nodes, storage specs, storages
// and accessors through their life as an operator would, reading tables and `-o json`; bad input
// named (before any call when gpuaasctl can tell); what is missing NOT_FOUND in one line; the
// stock and storage addresses resolved from the flag, the environment or .gpuaas/stack.env like
// the auth address.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "gpuaas/auth/v1/auth.grpc.pb.h"
#include "gpuaas/stock/v1/stock.grpc.pb.h"
#include "libs/testing/pg_test.h"
#include "libs/testing/service_dsn.h"
#include "libs/testing/temp_dir.h"
#include "tests/common/child_process.h"

namespace gpuaas::ctl {
namespace {

namespace fs = std::filesystem;
namespace authpb = ::gpuaas::auth::v1;
namespace stockpb = ::gpuaas::stock::v1;
using gpuaas::testing::ChildProcess;
using gpuaas::testing::FreePort;
using gpuaas::testing::ServiceDsn;
using gpuaas::testing::TempDir;
using gpuaas::testing::WaitServing;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::StartsWith;

constexpr std::string_view kPassword = "ctl-process-test-admin-password";

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

struct Result {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::ostream& operator<<(std::ostream& os, const Result& r) {
  return os << "exit " << r.exit_code << "\nstdout:\n" << r.out << "stderr:\n" << r.err;
}

// The line of `table` whose first word is `key`; "" when none.
std::string Row(const std::string& table, const std::string& key) {
  std::istringstream in(table);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key + " ", 0) == 0) {
      return line;
    }
  }
  return "";
}

// The words of a table row (cells never hold spaces, except a last free-text column).
std::vector<std::string> Words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string w; in >> w;) {
    words.push_back(w);
  }
  return words;
}

size_t Lines(const std::string& text) { return std::count(text.begin(), text.end(), '\n'); }

// PRICE/H and CURRENCY of a `specs` table row split into words.
std::string Price(const std::vector<std::string>& row) {
  return row.size() > 6 ? row[5] + " " + row[6] : "";
}

class GpuaasctlProcessTest : public gpuaas::testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped()) return;
    fs::create_directories(home());
    fs::create_directories(work());
    std::ofstream(dir_.path() / "admin-password") << kPassword << "\n";
    auth_addr_ = "127.0.0.1:" + std::to_string(FreePort());
    auth_ = std::make_unique<ChildProcess>(
        std::vector<std::string>{
            GPUAAS_AUTH_BINARY, "--listen=" + auth_addr_, "--metrics-listen=127.0.0.1:0",
            "--db-dsn=" + ServiceDsn(dsn(), "auth"),
            "--bootstrap-admin-password-file=" + (dir_.path() / "admin-password").string()},
        (dir_.path() / "auth.log").string());
    ASSERT_TRUE(WaitServing(auth_addr_)) << ReadFile(dir_.path() / "auth.log");
    stock_addr_ = "127.0.0.1:" + std::to_string(FreePort());
    stock_ = std::make_unique<ChildProcess>(
        std::vector<std::string>{
            GPUAAS_STOCK_BINARY, "--listen=" + stock_addr_, "--metrics-listen=127.0.0.1:0",
            "--db-dsn=" + ServiceDsn(dsn(), "stock"), "--auth-addr=" + auth_addr_,
            // Registered nodes stay READY without further heartbeats.
            "--node-timeout-seconds=3600"},
        (dir_.path() / "stock.log").string());
    ASSERT_TRUE(WaitServing(stock_addr_)) << ReadFile(dir_.path() / "stock.log");
  }
  void TearDown() override {
    if (storage_) {
      EXPECT_EQ(storage_->Terminate(), 0) << ReadFile(dir_.path() / "storage.log");
    }
    if (stock_) {
      EXPECT_EQ(stock_->Terminate(), 0) << ReadFile(dir_.path() / "stock.log");
    }
    if (auth_) {
      EXPECT_EQ(auth_->Terminate(), 0) << ReadFile(dir_.path() / "auth.log");
    }
    PgTest::TearDown();
  }

  fs::path home() const { return dir_.path() / "home"; }
  // The working directory of every gpuaasctl run: no .gpuaas/stack.env above it unless a test
  // writes one (the temp dir is outside any checkout).
  fs::path work() const { return dir_.path() / "work"; }

  // The environment a run sees: HOME for the token file and the service addresses, nothing
  // inherited (a developer's GPUAAS_TOKEN or stack must not leak in).
  std::map<std::string, std::string> Env() const {
    return {{"HOME", home().string()},
            {"GPUAAS_AUTH_ADDR", auth_addr_},
            {"GPUAAS_STOCK_ADDR", stock_addr_},
            {"GPUAAS_STORAGE_ADDR", storage_addr_}};
  }

  // Starts gpuaas-storage with its data root and sealing key in the test's directory.
  void StartStorage() {
    std::ofstream(dir_.path() / "storage.key", std::ios::binary) << std::string(32, 'k');
    storage_addr_ = "127.0.0.1:" + std::to_string(FreePort());
    storage_ = std::make_unique<ChildProcess>(
        std::vector<std::string>{
            GPUAAS_STORAGE_BINARY, "--listen=" + storage_addr_, "--metrics-listen=127.0.0.1:0",
            "--db-dsn=" + ServiceDsn(dsn(), "storage"), "--auth-addr=" + auth_addr_,
            "--data-root=" + storage_data().string(),
            "--secret-key-file=" + (dir_.path() / "storage.key").string(),
            "--s3-listen=127.0.0.1:" + std::to_string(FreePort()),
            // Plain directories: the test drives the CLI, not the volumes' file systems.
            "--volume-filesystem=directory"},
        (dir_.path() / "storage.log").string());
    ASSERT_TRUE(WaitServing(storage_addr_)) << ReadFile(dir_.path() / "storage.log");
  }
  fs::path storage_data() const { return dir_.path() / "storage-data"; }

  // Runs gpuaasctl with `args` to completion (every call has a deadline, so it ends).
  Result Run(const std::vector<std::string>& args) const { return RunWithEnv(args, Env()); }

  Result RunWithEnv(const std::vector<std::string>& args,
                    const std::map<std::string, std::string>& env) const {
    const fs::path out = dir_.path() / "ctl.out";
    const fs::path err = dir_.path() / "ctl.err";
    std::vector<std::string> argv = {GPUAAS_CTL_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<std::string> envs;
    for (const auto& [k, v] : env) {
      envs.push_back(k + "=" + v);
    }
    // Everything the child needs is prepared before fork: after it, only async-signal-safe calls.
    std::vector<char*> cargv;
    for (std::string& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    std::vector<char*> cenv;
    for (std::string& e : envs) cenv.push_back(e.data());
    cenv.push_back(nullptr);
    const std::string out_path = out.string();
    const std::string err_path = err.string();
    const std::string cwd = work().string();
    pid_t pid = fork();
    if (pid == 0) {
      int o = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      int e = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      int in = open("/dev/null", O_RDONLY);
      if (o < 0 || e < 0 || in < 0 || chdir(cwd.c_str()) != 0) _exit(126);
      dup2(o, STDOUT_FILENO);
      dup2(e, STDERR_FILENO);
      dup2(in, STDIN_FILENO);
      execve(cargv[0], cargv.data(), cenv.data());
      _exit(127);
    }
    Result r;
    int status = 0;
    if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status)) {
      r.exit_code = WEXITSTATUS(status);
    }
    r.out = ReadFile(out);
    r.err = ReadFile(err);
    return r;
  }

  void LogIn() {
    Result r = Run(
        {"login", "--user", "admin", "--password-file", (dir_.path() / "admin-password").string()});
    ASSERT_EQ(r.exit_code, 0) << r;
  }

  // A command that must fail: exit 1, nothing on stdout, one `error: CODE: message` line.
  // Returns CODE.
  std::string FailureCode(const Result& r) const {
    EXPECT_EQ(r.exit_code, 1) << r;
    EXPECT_EQ(r.out, "") << r;
    EXPECT_THAT(r.err, MatchesRegex("error: [A-Z_]+: [^\n]+\n")) << r;
    const size_t start = r.err.find(' ') + 1;
    return r.err.substr(start, r.err.find(':', start) - start);
  }

  // Registers `node_id` with 8 A100-80GB as its agent would, and sends one heartbeat with
  // readings for GPU 0 (an application XID, which leaves the GPU healthy).
  void RegisterA100Node(const std::string& node_id) {
    const std::string token = AgentToken(node_id);
    auto agent = stockpb::NodeAgentService::NewStub(
        grpc::CreateChannel(stock_addr_, grpc::InsecureChannelCredentials()));
    stockpb::RegisterNodeRequest req;
    stockpb::Node& node = *req.mutable_node();
    node.set_node_id(node_id);
    node.set_hostname(node_id);
    node.set_cpu("128");
    node.set_memory("1Ti");
    node.set_disk("8Ti");
    node.set_agent_version("test");
    (*node.mutable_labels())["zone"] = "a";
    for (int i = 0; i < 8; ++i) {
      stockpb::Gpu* g = node.add_gpus();
      g->set_uuid("GPU-" + node_id + "-" + std::to_string(i));
      g->set_model("A100-80GB");
      g->set_memory_mib(81920);
      g->set_healthy(true);
    }
    stockpb::RegisterNodeResponse registered;
    grpc::Status s = agent->RegisterNode(Ctx(token).get(), req, &registered);
    ASSERT_TRUE(s.ok()) << s.error_message();

    stockpb::HeartbeatRequest beat;
    beat.set_node_id(node_id);
    for (int i = 0; i < 8; ++i) {
      stockpb::GpuMetrics* m = beat.add_gpus();
      m->set_uuid("GPU-" + node_id + "-" + std::to_string(i));
      m->set_healthy(true);
    }
    stockpb::GpuMetrics& first = *beat.mutable_gpus(0);
    first.set_utilization_percent(37.4);
    first.set_memory_used_mib(1024);
    first.set_temperature_celsius(54.2);
    first.set_power_watts(250.6);
    first.set_last_xid(13);
    auto ctx = Ctx(token);
    auto stream = agent->Heartbeat(ctx.get());
    stockpb::HeartbeatResponse answer;
    ASSERT_TRUE(stream->Write(beat));
    ASSERT_TRUE(stream->Read(&answer));
    stream->WritesDone();
    s = stream->Finish();
    ASSERT_TRUE(s.ok()) << s.error_message();
  }

  std::string AdminToken() const {
    auto auth = authpb::AuthService::NewStub(
        grpc::CreateChannel(auth_addr_, grpc::InsecureChannelCredentials()));
    authpb::LoginRequest req;
    req.set_user_name("admin");
    req.set_password(std::string(kPassword));
    authpb::LoginResponse resp;
    grpc::Status s = auth->Login(Ctx().get(), req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return resp.access_token();
  }

  // A token of `node_id`'s own agent (a ROLE_NODE_AGENT key the admin binds to it): only the
  // node's agent makes its node calls.
  std::string AgentToken(const std::string& node_id) const {
    auto auth = authpb::AuthService::NewStub(
        grpc::CreateChannel(auth_addr_, grpc::InsecureChannelCredentials()));
    authpb::CreateApiKeyRequest create;
    create.set_name("agent " + node_id);
    create.set_role(common::v1::ROLE_NODE_AGENT);
    create.set_node_id(node_id);
    authpb::CreateApiKeyResponse key;
    grpc::Status s = auth->CreateApiKey(Ctx(AdminToken()).get(), create, &key);
    EXPECT_TRUE(s.ok()) << s.error_message();
    authpb::ExchangeApiKeyRequest exchange;
    exchange.set_secret(key.secret());
    authpb::ExchangeApiKeyResponse token;
    s = auth->ExchangeApiKey(Ctx().get(), exchange, &token);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return token.access_token();
  }

  static std::unique_ptr<grpc::ClientContext> Ctx(const std::string& token = "") {
    auto ctx = std::make_unique<grpc::ClientContext>();
    ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    if (!token.empty()) ctx->AddMetadata("authorization", "Bearer " + token);
    return ctx;
  }

  TempDir dir_;
  std::string auth_addr_;
  std::string stock_addr_;
  std::string storage_addr_;
  std::unique_ptr<ChildProcess> auth_;
  std::unique_ptr<ChildProcess> stock_;
  std::unique_ptr<ChildProcess> storage_;
};

const std::vector<std::string> kA100 = {
    "specs",     "create",           "a100.1x",     "--gpu-type",
    "A100-80GB", "--gpu-num",        "1",           "--cpu",
    "8",         "--memory",         "32Gi",        "--disk",
    "200Gi",     "--price-per-hour", "1.20",        "--currency",
    "USD",       "--description",    "training box"};

TEST_F(GpuaasctlProcessTest, SpecsCreateGetListUpdateDelete) {
  LogIn();
  Result r = Run(kA100);
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_THAT(r.out, StartsWith("SPEC "));
  std::vector<std::string> row = Words(Row(r.out, "a100.1x"));
  ASSERT_EQ(row.size(), 11u) << r;
  EXPECT_THAT(row[8], MatchesRegex("[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z"));  // CREATED
  row[8] = "created";
  EXPECT_EQ(row, (std::vector<std::string>{"a100.1x", "1xA100-80GB", "8", "32Gi", "200Gi", "1.20",
                                           "USD", "no", "created", "training", "box"}));
  // The same spec again is a no-op (CreateSpec is idempotent by name).
  r = Run(kA100);
  EXPECT_EQ(r.exit_code, 0) << r;

  r = Run({"specs", "create", "t4.quarter", "--gpu-type", "T4", "--gpu-share-milli", "250", "--cpu",
           "2", "--memory", "8Gi", "--disk", "50Gi", "--price-per-hour", "0.000001"});
  ASSERT_EQ(r.exit_code, 0) << r;
  row = Words(Row(r.out, "t4.quarter"));
  ASSERT_EQ(row.size(), 10u) << r;  // no description: "-"
  EXPECT_EQ(row[1], "0.25xT4");
  EXPECT_EQ(row[5], "0.000001");

  r = Run({"specs", "get", "a100.1x", "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r;
  nlohmann::json spec = nlohmann::json::parse(r.out);
  EXPECT_EQ(spec["spec_name"], "a100.1x");
  EXPECT_EQ(spec["gpu_type"], "A100-80GB");
  EXPECT_EQ(spec["price"]["micros_per_hour"], "1200000");  // int64 is a string in proto JSON
  EXPECT_EQ(spec["price"]["currency"], "USD");
  EXPECT_EQ(spec["description"], "training box");
  EXPECT_EQ(spec["deprecated"], false);

  r = Run({"specs", "list"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_NE(Row(r.out, "a100.1x"), "");
  EXPECT_LT(r.out.find("a100.1x"), r.out.find("t4.quarter"));  // by name

  // --all walks every page: one spec per page here.
  r = Run({"specs", "list", "--page-size", "1", "--all", "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r;
  nlohmann::json all = nlohmann::json::parse(r.out);
  ASSERT_EQ(all["specs"].size(), 2u) << r;
  EXPECT_EQ(all["next_page_token"], "");
  r = Run({"specs", "list", "--page-size", "1"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(Row(r.out, "t4.quarter"), "");
  EXPECT_THAT(r.err, StartsWith("more results: --page-token "));

  // Only the price: the currency stays the spec's own.
  r = Run({"specs", "update", "a100.1x", "--price-per-hour", "2.5"});
  ASSERT_EQ(r.exit_code, 0) << r;
  row = Words(Row(r.out, "a100.1x"));
  ASSERT_EQ(row.size(), 11u) << r;
  EXPECT_EQ(Price(row), "2.50 USD");
  EXPECT_EQ(row[9] + " " + row[10], "training box");
  r = Run({"specs", "update", "a100.1x", "--description", "fine-tuning"});
  ASSERT_EQ(r.exit_code, 0) << r;
  row = Words(Row(r.out, "a100.1x"));
  ASSERT_EQ(row.size(), 10u) << r;
  EXPECT_EQ(Price(row), "2.50 USD");
  EXPECT_EQ(row[7], "no");
  EXPECT_EQ(row[9], "fine-tuning");
  r = Run({"specs", "update", "a100.1x", "--deprecated=true"});
  ASSERT_EQ(r.exit_code, 0) << r;
  row = Words(Row(r.out, "a100.1x"));
  ASSERT_EQ(row.size(), 10u) << r;
  EXPECT_EQ(Price(row), "2.50 USD");
  EXPECT_EQ(row[7], "yes");

  r = Run({"specs", "list"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(Row(r.out, "a100.1x"), "") << "deprecated specs are hidden";
  r = Run({"specs", "list", "--show-deprecated"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_NE(Row(r.out, "a100.1x"), "");

  r = Run({"specs", "update", "a100.1x", "--deprecated=false", "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(nlohmann::json::parse(r.out)["deprecated"], false);
  EXPECT_EQ(nlohmann::json::parse(r.out)["price"]["micros_per_hour"], "2500000");

  r = Run({"specs", "update", "a100.1x"});
  EXPECT_EQ(FailureCode(r), "INVALID_ARGUMENT");
  EXPECT_THAT(r.err, HasSubstr("nothing to update"));

  r = Run({"specs", "delete", "a100.1x"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(r.out, "deleted spec a100.1x\n");
  r = Run({"specs", "get", "a100.1x"});
  EXPECT_EQ(FailureCode(r), "NOT_FOUND");
  r = Run({"specs", "delete", "a100.1x", "-o", "json"});
  EXPECT_EQ(FailureCode(r), "NOT_FOUND");
}

TEST_F(GpuaasctlProcessTest, BadInputIsNamed) {
  Result r = Run({"specs", "list"});
  EXPECT_EQ(FailureCode(r), "UNAUTHENTICATED");
  EXPECT_THAT(r.err, HasSubstr("gpuaasctl login"));

  LogIn();
  std::vector<std::string> args = kA100;
  *std::find(args.begin(), args.end(), "1.20") = "abc";
  r = Run(args);
  EXPECT_EQ(FailureCode(r), "INVALID_ARGUMENT");
  EXPECT_THAT(r.err, StartsWith("error: INVALID_ARGUMENT: --price-per-hour: "));

  args = kA100;
  *std::find(args.begin(), args.end(), "1.20") = "1.2345678";
  EXPECT_EQ(FailureCode(Run(args)), "INVALID_ARGUMENT");

  // What only the server checks comes back naming the proto field.
  args = kA100;
  *std::find(args.begin(), args.end(), "32Gi") = "lots";
  r = Run(args);
  EXPECT_EQ(FailureCode(r), "INVALID_ARGUMENT");
  EXPECT_THAT(r.err, StartsWith("error: INVALID_ARGUMENT: spec.memory: "));

  r = Run({"specs", "update", "a100.1x", "--currency", "EUR"});
  EXPECT_EQ(FailureCode(r), "INVALID_ARGUMENT");
  EXPECT_THAT(r.err, HasSubstr("--currency"));

  r = Run({"stocks", "list", "--state", "init"});
  EXPECT_EQ(FailureCode(r), "INVALID_ARGUMENT");
  EXPECT_THAT(r.err, HasSubstr("--state: unknown stock state \"init\""));

  // Usage errors (CLI11's own checks) exit 2.
  r = Run({"stocks", "create", "--spec", "a100.1x", "-n", "0"});
  EXPECT_EQ(r.exit_code, 2) << r;
  r = Run({"specs", "create", "x.1x", "--gpu-type", "T4", "--gpu-share-milli", "250",
           "--mig-profile", "1g.10gb", "--cpu", "1", "--memory", "1Gi", "--disk", "1Gi",
           "--price-per-hour", "1"});
  EXPECT_EQ(r.exit_code, 2) << r;
}

// An operator's round: nodes registered (through the agents' RPCs, as the test's stand-in for
// gpuaas-agent), a spec, stocks placed all-or-nothing and then partially, claimed, released and
// deleted, a node cordoned, uncordoned and drained.
TEST_F(GpuaasctlProcessTest, StocksAndNodesThroughTheirLife) {
  LogIn();
  RegisterA100Node("gpu-node-1");
  ASSERT_EQ(Run(kA100).exit_code, 0);

  // All or nothing: 10 do not fit on 8 GPUs.
  Result r = Run({"stocks", "create", "--spec", "a100.1x", "-n", "10"});
  EXPECT_EQ(FailureCode(r), "RESOURCE_EXHAUSTED");
  r = Run({"stocks", "create", "--spec", "a100.1x", "-n", "10", "--allow-partial", "--operation-id",
           "op-fill"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_THAT(r.out, StartsWith("placed:       8 of 10\nshortfall:    "));
  EXPECT_THAT(r.out, HasSubstr("\noperation id: op-fill\n\nSTOCK "));
  const std::string placed = r.out;
  // The same operation again changes nothing and answers the same.
  r = Run({"stocks", "create", "--spec", "a100.1x", "-n", "10", "--allow-partial", "--operation-id",
           "op-fill"});
  EXPECT_EQ(r.out, placed) << r;

  r = Run({"stocks", "summary"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(Words(Row(r.out, "a100.1x")),
            (std::vector<std::string>{"a100.1x", "8", "8", "0", "0", "0"}));
  r = Run({"stocks", "list", "--state", "available", "--node", "gpu-node-1", "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r;
  nlohmann::json listed = nlohmann::json::parse(r.out);
  ASSERT_EQ(listed["stocks"].size(), 8u);
  EXPECT_EQ(listed["stocks"][0]["state"], "STOCK_STATE_AVAILABLE");
  EXPECT_EQ(listed["stocks"][0]["node_id"], "gpu-node-1");
  EXPECT_EQ(Lines(Run({"stocks", "search", "a100"}).out), 1 + 8);
  EXPECT_EQ(Lines(Run({"stocks", "search", "100.1", "--substring"}).out), 1 + 8);
  EXPECT_EQ(Lines(Run({"stocks", "search", "100.1"}).out), 1);

  r = Run({"stocks", "claim", "--spec", "a100.1x", "--instance", "inst-1"});
  ASSERT_EQ(r.exit_code, 0) << r;
  std::vector<std::string> claimed = Words(r.out.substr(r.out.find('\n') + 1));
  ASSERT_EQ(claimed.size(), 8u) << r;
  EXPECT_EQ(claimed[3], "claimed");
  EXPECT_EQ(claimed[6], "inst-1");
  const std::string stock_id = claimed[0];
  r = Run({"stocks", "claim", "--spec", "a100.1x", "--instance", "inst-1"});
  EXPECT_THAT(r.out, HasSubstr(stock_id)) << "a retry returns the stock already claimed";
  r = Run({"stocks", "list", "--state", "claimed"});
  EXPECT_EQ(Words(Row(r.out, stock_id)).size(), 8u) << r;

  // Claimed stocks are never deleted.
  r = Run({"stocks", "delete", "--spec", "a100.1x", "-n", "10"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_THAT(r.out, StartsWith("deleted:      7 of 10\nshortfall:    "));
  r = Run({"stocks", "summary", "--spec", "a100.1x"});
  EXPECT_EQ(Words(Row(r.out, "a100.1x")),
            (std::vector<std::string>{"a100.1x", "1", "0", "1", "0", "0"}));

  r = Run({"stocks", "release", "--instance", "inst-1"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(r.out, "released stock " + stock_id + " from instance inst-1\n");
  r = Run({"stocks", "release", "--instance", "inst-1"});
  EXPECT_EQ(r.out, "instance inst-1 held no stock\n");

  r = Run({"nodes", "list"});
  ASSERT_EQ(r.exit_code, 0) << r;
  std::vector<std::string> node = Words(Row(r.out, "gpu-node-1"));
  ASSERT_EQ(node.size(), 10u) << r;
  EXPECT_EQ(node[2], "ready");
  EXPECT_EQ(node[3], "8xA100-80GB");
  EXPECT_EQ(node[4], "0");
  r = Run({"nodes", "get", "gpu-node-1"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_THAT(r.out, HasSubstr("labels:    zone=a\n"));
  EXPECT_EQ(Words(Row(r.out, "0")),
            (std::vector<std::string>{"0", "GPU-gpu-node-1-0", "A100-80GB", "81920MiB", "no",
                                      "healthy", "13", "37%", "1024MiB", "54C", "251W"}));

  r = Run({"nodes", "cordon", "gpu-node-1"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(Words(Row(r.out, "gpu-node-1"))[2], "ready,cordoned");
  EXPECT_EQ(FailureCode(Run({"stocks", "create", "--spec", "a100.1x", "-n", "1"})),
            "RESOURCE_EXHAUSTED");
  r = Run({"nodes", "uncordon", "gpu-node-1"});
  EXPECT_EQ(Words(Row(r.out, "gpu-node-1"))[2], "ready");
  r = Run({"stocks", "create", "--spec", "a100.1x", "-n", "2"});
  EXPECT_THAT(r.out, StartsWith("placed:       2 of 2\noperation id: req_")) << r;

  r = Run({"nodes", "drain", "gpu-node-1", "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(nlohmann::json::parse(r.out)["cordoned"], true);
  r = Run({"stocks", "list", "--node", "gpu-node-1"});
  EXPECT_EQ(Lines(r.out), 1) << r;
  r = Run({"specs", "delete", "a100.1x"});
  EXPECT_EQ(r.exit_code, 0) << r;
}

// What does not exist is NOT_FOUND, printed as one line; reads of nothing are header-only tables.
TEST_F(GpuaasctlProcessTest, MissingSpecsAndNodesAreNotFound) {
  LogIn();
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"stocks", "create", "--spec", "no.such", "-n", "2"},
           {"stocks", "claim", "--spec", "no.such", "--instance", "inst-1"},
           {"nodes", "get", "no-such-node"},
           {"nodes", "cordon", "no-such-node"},
           {"nodes", "uncordon", "no-such-node"},
           {"nodes", "drain", "no-such-node"},
       }) {
    SCOPED_TRACE(args[0] + " " + args[1]);
    EXPECT_EQ(FailureCode(Run(args)), "NOT_FOUND");
  }
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"stocks", "list", "--spec", "a100.1x", "--state", "claimed", "--node", "n1"},
           {"stocks", "search", "a100", "--substring"},
           {"stocks", "summary"},
           {"nodes", "list"},
       }) {
    SCOPED_TRACE(args[0] + " " + args[1]);
    Result r = Run(args);
    EXPECT_EQ(r.exit_code, 0) << r;
    EXPECT_EQ(Lines(r.out), 1) << r;
  }
}

TEST_F(GpuaasctlProcessTest, StockAddressFromFlagEnvironmentOrStackEnv) {
  LogIn();
  // From .gpuaas/stack.env above the working directory, as `tools/gpuaas up` writes it.
  fs::create_directories(work() / ".gpuaas");
  std::ofstream(work() / ".gpuaas" / "stack.env")
      << "GPUAAS_AUTH_ADDR=" << auth_addr_ << "\nGPUAAS_STOCK_ADDR=" << stock_addr_ << "\n";
  Result r = RunWithEnv({"specs", "list"}, {{"HOME", home().string()}});
  EXPECT_EQ(r.exit_code, 0) << r;

  // The environment wins over stack.env, the flag over both.
  const std::string nowhere = "127.0.0.1:" + std::to_string(FreePort());
  std::map<std::string, std::string> env = Env();
  env["GPUAAS_STOCK_ADDR"] = nowhere;
  r = RunWithEnv({"specs", "list"}, env);
  EXPECT_EQ(FailureCode(r), "UNAVAILABLE");
  EXPECT_THAT(r.err, HasSubstr("stock service at " + nowhere + ": "));
  r = RunWithEnv({"--stock-addr", stock_addr_, "specs", "list"}, env);
  EXPECT_EQ(r.exit_code, 0) << r;
  r = RunWithEnv({"specs", "list", "--stock-addr", stock_addr_}, env);  // after the command too
  EXPECT_EQ(r.exit_code, 0) << r;
  // The auth commands do not need the stock service.
  r = RunWithEnv({"whoami"}, env);
  EXPECT_EQ(r.exit_code, 0) << r;
}

TEST_F(GpuaasctlProcessTest, ViewersReadSpecsButCannotWriteThem) {
  LogIn();
  ASSERT_EQ(Run(kA100).exit_code, 0);
  ASSERT_EQ(Run({"tenants", "create", "studio-a"}).exit_code, 0);
  const fs::path pw = dir_.path() / "viewer-password";
  std::ofstream(pw) << "viewer-password-123\n";
  Result r = Run({"users", "create", "vera", "--tenant", "studio-a", "--role", "viewer",
                  "--password-file", pw.string()});
  ASSERT_EQ(r.exit_code, 0) << r;
  r = Run({"login", "--user", "vera", "--password-file", pw.string()});
  ASSERT_EQ(r.exit_code, 0) << r;
  r = Run({"specs", "get", "a100.1x"});
  EXPECT_EQ(r.exit_code, 0) << r;
  r = Run({"specs", "delete", "a100.1x"});
  EXPECT_EQ(FailureCode(r), "PERMISSION_DENIED");
}

// The same, with gpuaas-storage running too.
class GpuaasctlStorageProcessTest : public GpuaasctlProcessTest {
 protected:
  void SetUp() override {
    GpuaasctlProcessTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    StartStorage();
  }

  // The line of `text` that starts with `prefix`, without it; "" when none.
  static std::string After(const std::string& text, const std::string& prefix) {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind(prefix, 0) == 0) return line.substr(prefix.size());
    }
    return "";
  }
};

TEST_F(GpuaasctlStorageProcessTest, StorageSpecsStoragesAndAccessorsThroughTheirLife) {
  LogIn();
  Result r = Run({"tenants", "create", "studio-a", "--max-storage-bytes", "10737418240"});
  ASSERT_EQ(r.exit_code, 0) << r;

  r = Run({"storage-specs", "create", "ssd-1g", "--size", "1024Mi", "--max-files", "1000",
           "--price-per-gb-hour", "0.00005", "--description", "fast disk"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_THAT(r.out, StartsWith("SPEC "));
  std::vector<std::string> row = Words(Row(r.out, "ssd-1g"));
  ASSERT_EQ(row.size(), 8u) << r;
  EXPECT_EQ(std::vector<std::string>(row.begin(), row.begin() + 5),
            (std::vector<std::string>{"ssd-1g", "1Gi", "1000", "0.00005", "local"}));
  r = Run({"storage-specs", "create", "ssd-2g", "--size", "2Gi", "--max-files", "2000",
           "--price-per-gb-hour", "0.0001"});
  ASSERT_EQ(r.exit_code, 0) << r;
  r = Run({"storage-specs", "update", "ssd-1g", "--price-per-gb-hour", "0.00006"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(Words(Row(r.out, "ssd-1g"))[3], "0.00006");
  r = Run({"storage-specs", "get", "ssd-1g", "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r;
  nlohmann::json spec = nlohmann::json::parse(r.out);
  EXPECT_EQ(spec["size_bytes"], "1073741824");
  EXPECT_EQ(spec["description"], "fast disk");
  r = Run({"storage-specs", "list"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_LT(r.out.find("ssd-1g"), r.out.find("ssd-2g"));

  r = Run({"storages", "create", "models", "--spec", "ssd-1g", "--tenant", "studio-a", "--name",
           "my models"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(Words(After(r.out, "state:")), std::vector<std::string>{"ready"}) << r;
  // The volume's directory is named by the storage's identity, never its reusable id.
  r = Run({"storages", "get", "models", "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r;
  const std::string models_uid = nlohmann::json::parse(r.out)["storage_uid"];
  EXPECT_THAT(models_uid, StartsWith("vol_"));
  EXPECT_TRUE(fs::is_directory(storage_data() / "volumes" / models_uid));
  r = Run({"storages", "create", "--spec", "ssd-1g", "--tenant", "studio-a", "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r;
  const std::string chosen = nlohmann::json::parse(r.out)["storage_id"];
  EXPECT_THAT(chosen, StartsWith("stg-"));
  r = Run({"storages", "list"});
  ASSERT_EQ(r.exit_code, 0) << r;
  row = Words(Row(r.out, "models"));
  ASSERT_EQ(row.size(), 10u) << r;  // the name has two words
  EXPECT_EQ(std::vector<std::string>(row.begin(), row.begin() + 6),
            (std::vector<std::string>{"models", "studio-a", "ssd-1g", "ready", "1.0GiB", "1000"}));
  EXPECT_NE(Row(r.out, chosen), "");
  r = Run({"storages", "get", "models", "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r;
  nlohmann::json storage = nlohmann::json::parse(r.out);
  EXPECT_EQ(storage["state"], "STORAGE_STATE_READY");
  EXPECT_EQ(storage["used_bytes"], "0");
  EXPECT_EQ(storage["name"], "my models");

  r = Run({"storages", "resize", "models", "--spec", "ssd-2g"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(Words(After(r.out, "size:")), std::vector<std::string>{"2.0GiB"}) << r;
  r = Run({"storages", "resize", "models", "--spec", "ssd-1g"});
  EXPECT_EQ(FailureCode(r), "FAILED_PRECONDITION");
  EXPECT_THAT(r.err, HasSubstr("never shrink"));
  r = Run({"storages", "rename", "models", "--name", "weights"});
  ASSERT_EQ(r.exit_code, 0) << r;

  r = Run({"accessors", "create", "models", "--ttl", "2h", "--s3-endpoint",
           "http://s3.example:9000", "--description", "laptop"});
  ASSERT_EQ(r.exit_code, 0) << r;
  const std::string key_id = Words(After(r.out, "access key id:")).at(0);
  const std::string secret = Words(After(r.out, "secret access key:")).at(0);
  EXPECT_THAT(key_id, MatchesRegex("GK[A-Z2-7]{18}"));
  EXPECT_EQ(secret.size(), 40u);
  EXPECT_THAT(r.out, HasSubstr("aws configure set aws_access_key_id " + key_id +
                               " --profile gpuaas-models\n"));
  EXPECT_THAT(r.out, HasSubstr("aws configure set aws_secret_access_key " + secret));
  EXPECT_THAT(r.out, HasSubstr("--endpoint-url http://s3.example:9000 s3 ls s3://models/"));
  EXPECT_THAT(r.out, HasSubstr("export AWS_SECRET_ACCESS_KEY=" + secret + "\n"));
  EXPECT_THAT(r.out, HasSubstr("[gpuaas-models]\ntype = s3\nprovider = Other\n"));
  EXPECT_THAT(r.out, HasSubstr("endpoint = http://s3.example:9000\n"));
  r = Run({"accessors", "create", "models", "--read-only", "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r;
  nlohmann::json key = nlohmann::json::parse(r.out);
  EXPECT_EQ(key["accessor"]["read_only"], true);
  EXPECT_EQ(key["secret_access_key"].get<std::string>().size(), 40u);

  r = Run({"accessors", "list", "models"});
  ASSERT_EQ(r.exit_code, 0) << r;
  row = Words(Row(r.out, key_id));
  ASSERT_EQ(row.size(), 7u) << r;
  EXPECT_EQ(row[1], "models");
  EXPECT_EQ(row[2], "read-write");
  EXPECT_EQ(row[6], "laptop");
  EXPECT_EQ(r.out.find(secret), std::string::npos);
  r = Run({"accessors", "delete", key_id});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(r.out, "deleted accessor " + key_id + "\n");
  r = Run({"accessors", "delete", key_id});
  EXPECT_EQ(FailureCode(r), "NOT_FOUND");

  r = Run({"storage-specs", "delete", "ssd-2g"});
  EXPECT_EQ(FailureCode(r), "FAILED_PRECONDITION");
  r = Run({"storages", "delete", "models"});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_EQ(r.out, "deleted storage models\n");
  EXPECT_FALSE(fs::exists(storage_data() / "volumes" / models_uid));
  r = Run({"storages", "get", "models"});
  EXPECT_EQ(FailureCode(r), "NOT_FOUND");
  r = Run({"storage-specs", "delete", "ssd-2g"});
  EXPECT_EQ(r.exit_code, 0) << r;
}

TEST_F(GpuaasctlStorageProcessTest, BadInputAndAddresses) {
  LogIn();
  ASSERT_EQ(Run({"tenants", "create", "studio-a", "--max-storage-bytes", "1073741824"}).exit_code,
            0);
  Result r = Run({"storage-specs", "create", "ssd-1g", "--size", "1GB", "--max-files", "10",
                  "--price-per-gb-hour", "0"});
  EXPECT_EQ(FailureCode(r), "INVALID_ARGUMENT");
  EXPECT_THAT(r.err, HasSubstr("spec.size"));
  r = Run({"storage-specs", "create", "ssd-1g", "--size", "1Gi", "--max-files", "10",
           "--price-per-gb-hour", "0"});
  ASSERT_EQ(r.exit_code, 0) << r;
  // A platform admin acts in no tenant: it names one.
  r = Run({"storages", "create", "models", "--spec", "ssd-1g"});
  EXPECT_EQ(FailureCode(r), "INVALID_ARGUMENT");
  EXPECT_THAT(r.err, HasSubstr("tenant_id"));
  r = Run({"storages", "list", "--state", "gone"});
  EXPECT_EQ(FailureCode(r), "INVALID_ARGUMENT");
  EXPECT_THAT(r.err, HasSubstr("--state"));
  r = Run({"accessors", "create", "models", "--ttl", "forever"});
  EXPECT_EQ(FailureCode(r), "INVALID_ARGUMENT");
  EXPECT_THAT(r.err, HasSubstr("--ttl"));
  r = Run({"storages", "create", "models", "--spec", "ssd-1g", "--tenant", "studio-a"});
  ASSERT_EQ(r.exit_code, 0) << r;
  // Over the quota: 1 GiB is all studio-a may reserve.
  r = Run({"storages", "create", "more", "--spec", "ssd-1g", "--tenant", "studio-a"});
  EXPECT_EQ(FailureCode(r), "RESOURCE_EXHAUSTED");
  EXPECT_THAT(r.err, HasSubstr("max_storage_bytes"));

  // The storage address and the S3 endpoint from .gpuaas/stack.env, as `tools/gpuaas up`
  // writes them.
  fs::create_directories(work() / ".gpuaas");
  std::ofstream(work() / ".gpuaas" / "stack.env")
      << "GPUAAS_AUTH_ADDR=" << auth_addr_ << "\nGPUAAS_STORAGE_ADDR=" << storage_addr_
      << "\nGPUAAS_S3_ENDPOINT=http://stack-s3:9999\n";
  r = RunWithEnv({"accessors", "create", "models"}, {{"HOME", home().string()}});
  ASSERT_EQ(r.exit_code, 0) << r;
  EXPECT_THAT(r.out, HasSubstr("endpoint = http://stack-s3:9999\n"));
  const std::string nowhere = "127.0.0.1:" + std::to_string(FreePort());
  std::map<std::string, std::string> env = Env();
  env["GPUAAS_STORAGE_ADDR"] = nowhere;
  r = RunWithEnv({"storages", "list"}, env);
  EXPECT_EQ(FailureCode(r), "UNAVAILABLE");
  EXPECT_THAT(r.err, HasSubstr("storage service at " + nowhere + ": "));
  r = RunWithEnv({"--storage-addr", storage_addr_, "storages", "list"}, env);
  EXPECT_EQ(r.exit_code, 0) << r;
}

// This stack's storages are the local backend's, which has no snapshots: the commands reach the
// service and say so (storage_ceph_service_test takes real ones).
TEST_F(GpuaasctlStorageProcessTest, SnapshotsOfALocalStorageSayTheBackendHasNone) {
  LogIn();
  ASSERT_EQ(Run({"tenants", "create", "studio-a", "--max-storage-bytes", "4294967296"}).exit_code,
            0);
  ASSERT_EQ(Run({"storage-specs", "create", "ssd-1g", "--size", "1Gi", "--max-files", "10",
                 "--price-per-gb-hour", "0"})
                .exit_code,
            0);
  Result r = Run({"storages", "create", "models", "--spec", "ssd-1g", "--tenant", "studio-a"});
  ASSERT_EQ(r.exit_code, 0) << r;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"storages", "snapshots", "create", "models", "before-run"},
        std::vector<std::string>{"storages", "snapshots", "list", "models"},
        std::vector<std::string>{"storages", "snapshots", "delete", "models", "before-run"}}) {
    r = Run(args);
    EXPECT_EQ(FailureCode(r), "UNIMPLEMENTED") << args[2];
    EXPECT_THAT(r.err, HasSubstr("local storage backend has no snapshots")) << args[2];
  }
  r = Run({"storages", "snapshots", "list", "nothing-here"});
  EXPECT_EQ(FailureCode(r), "NOT_FOUND");
  r = Run({"storages", "create", "copy", "--spec", "ssd-1g", "--tenant", "studio-a",
           "--from-snapshot", "models"});
  EXPECT_EQ(FailureCode(r), "INVALID_ARGUMENT");
  EXPECT_THAT(r.err, HasSubstr("--from-snapshot"));
  r = Run({"storages", "create", "copy", "--spec", "ssd-1g", "--tenant", "studio-a",
           "--from-snapshot", "models/before-run"});
  EXPECT_EQ(FailureCode(r), "UNIMPLEMENTED");
  r = Run({"storages", "get", "copy"});
  EXPECT_EQ(FailureCode(r), "NOT_FOUND") << "a restore refused leaves no storage";
}

}  // namespace
}  // namespace gpuaas::ctl
