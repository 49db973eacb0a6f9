// Attacks on the database (issue 22, hole 1), on the real platform: from inside a workload (a
// container in its own network namespace), and as a service whose role was stolen. Each asserts
// the attack fails and that the legitimate path still works: the workload has no route to the
// server, and the same connection from the node itself (as the node's every other process
// would make it) is refused for want of a password; the services serve on their own roles.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "libs/db/db.h"
#include "libs/db/dsn.h"
#include "libs/testing/eventually.h"
#include "libs/testing/pg_test.h"
#include "libs/testing/service_dsn.h"
#include "libs/testing/temp_dir.h"
#include "tests/platform/platform_stack.h"

namespace gpuaas::platform_testing {
namespace {

constexpr const char* kServices[] = {"auth", "stock", "storage", "instance"};
// The server's own psql: /usr is the host's inside the sandbox (/usr/bin/psql is a Perl wrapper
// that wants more of /etc than a workload needs).
constexpr const char* kPsql = "/usr/lib/postgresql/15/bin/psql";

class DatabaseAttackTest : public gpuaas::testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped()) return;
    stack_ = std::make_unique<PlatformStack>(dsn(), dir_.path());
    token_ = stack_->CreateTenant("mallory");
    stack_->CreateSpecWithStocks("a100.1x", "A100-80GB", 1, 0, 1);
  }
  void TearDown() override {
    stack_.reset();
    PgTest::TearDown();
  }

  std::string Role(const std::string& service) const {
    return absl::StrCat(database(), "_", service);
  }
  std::string Port() const { return db::DsnParam(dsn(), "port").value_or("5432"); }

  // Runs `script` as the command of a tenant's instance (a real workload in the agent's
  // sandbox, as `nobody`) and returns its stdout once it printed "DONE".
  std::string RunInWorkload(const std::string& script) {
    instancepb::CreateInstanceRequest req;
    req.set_instance_id("intruder");
    req.set_spec_name("a100.1x");
    req.mutable_template_()->set_cmd(script + "\necho DONE; sleep 600");
    instancepb::Instance created;
    grpc::Status s =
        stack_->instances().CreateInstance(PlatformStack::Ctx(token_).get(), req, &created);
    EXPECT_TRUE(s.ok()) << s.error_message();
    instancepb::Instance running = stack_->WaitInstance(
        token_, "intruder", [](const auto& i) { return i.state() == instancepb::STATE_RUNNING; });
    EXPECT_EQ(running.state(), instancepb::STATE_RUNNING) << stack_->agent("node-a").Log();
    std::string out;
    EXPECT_TRUE(gpuaas::testing::Eventually([&] {
      instancepb::GetInstanceLogsRequest logs;
      logs.set_instance_id("intruder");
      logs.set_stream(instancepb::LOG_STREAM_STDOUT);
      logs.set_tail_lines(1000);
      std::unique_ptr<grpc::ClientContext> ctx = PlatformStack::Ctx(token_);
      auto reader = stack_->instances().GetInstanceLogs(ctx.get(), logs);
      instancepb::LogChunk chunk;
      out.clear();
      while (reader->Read(&chunk)) out += chunk.data();
      reader->Finish();
      return out.find("DONE") != std::string::npos;
    })) << out;
    return out;
  }

  // Runs `script` on the node (this process's host), with no password file, and returns its
  // stdout: the connection a workload would make if it had a route.
  std::string RunOnNode(const std::string& script) {
    const std::filesystem::path file = dir_.path() / "on-node.sh";
    std::ofstream(file) << script;
    std::string out;
    if (FILE* p = popen(absl::StrCat("env -i PATH=/usr/bin:/bin PGPASSFILE=/dev/null sh ",
                                     file.string(), " 2>&1")
                            .c_str(),
                        "r")) {
      std::array<char, 4096> buf{};
      while (fgets(buf.data(), buf.size(), p) != nullptr) out += buf.data();
      pclose(p);
    }
    return out;
  }

  // A psql run in the workload: one line "<name> rc=<exit code> <its output>".
  std::string Psql(const std::string& name, const std::string& conninfo) const {
    return absl::StrCat("out=$(PGCONNECT_TIMEOUT=5 ", kPsql, " -X -w -Atc 'SELECT 1' '", conninfo,
                        "' 2>&1); echo \"", name, " rc=$? $(echo $out | tr '\\n' ' ')\"\n");
  }

  // A psql attempt from inside the workload: the server is not there at all.
  static void ExpectNoRoute(const std::string& line, const std::string& attempt,
                            const std::string& out) {
    EXPECT_TRUE(line.starts_with(absl::StrCat(attempt, " rc=2 "))) << line << "\n" << out;
    EXPECT_TRUE(line.find("Connection refused") != std::string::npos ||
                line.find("timeout") != std::string::npos)
        << line;
  }
  // The same from the node: it reaches the server, which refuses it for want of a password.
  static void ExpectRefusedForPassword(const std::string& line, const std::string& attempt,
                                       const std::string& out) {
    EXPECT_TRUE(line.starts_with(absl::StrCat(attempt, " rc=2 "))) << line << "\n" << out;
    EXPECT_NE(line.find("password"), std::string::npos) << line;
  }

  // The line of `out` that starts with `name`.
  static std::string Line(const std::string& out, const std::string& name) {
    for (const std::string& line : std::vector<std::string>(absl::StrSplit(out, '\n'))) {
      if (line.starts_with(name + " ")) return line;
    }
    return "";
  }

  gpuaas::testing::TempDir dir_;
  std::unique_ptr<PlatformStack> stack_;
  std::string token_;
};

// The hole: the cluster trusted loopback, and the workload shared the host's loopback. Now the
// workload's loopback is its own (no route), and the node's is refused without a password.
TEST_F(DatabaseAttackTest, WorkloadConnectsAsSuperuserWithoutPassword) {
  const std::string tcp = absl::StrCat("host=127.0.0.1 port=", Port(), " user=postgres");
  const std::string script = Psql("superuser", tcp + " dbname=postgres") +
                             Psql("superuser-on-platform-db", tcp + " dbname=" + database()) +
                             Psql("superuser-guessed", tcp + " dbname=postgres password=postgres");
  const std::string out = RunInWorkload(script);
  const std::string on_node = RunOnNode(script);
  for (const std::string attempt : {"superuser", "superuser-on-platform-db", "superuser-guessed"}) {
    ExpectNoRoute(Line(out, attempt), attempt, out);
    ExpectRefusedForPassword(Line(on_node, attempt), attempt, on_node);
  }
}

TEST_F(DatabaseAttackTest, WorkloadConnectsAsServiceRoleWithoutPassword) {
  std::string script;
  for (const std::string service : kServices) {
    script += Psql(service, absl::StrCat("host=127.0.0.1 port=", Port(), " user=", Role(service),
                                         " dbname=", database()));
  }
  const std::string out = RunInWorkload(script);
  const std::string on_node = RunOnNode(script);
  for (const std::string service : kServices) {
    ExpectNoRoute(Line(out, service), service, out);
    ExpectRefusedForPassword(Line(on_node, service), service, on_node);
  }
  // The services themselves connect with their roles: they serve.
  instancepb::ListInstancesRequest list;
  instancepb::ListInstancesResponse listed;
  grpc::Status s =
      stack_->instances().ListInstances(PlatformStack::Ctx(token_).get(), list, &listed);
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(listed.instances_size(), 1);
}

TEST_F(DatabaseAttackTest, WorkloadReadsDatabasePasswordFiles) {
  // Every password file the platform wrote: the superuser's and each service role's, and the
  // cluster's own directory (its unix socket too).
  std::vector<std::string> files = {db::DsnParam(dsn(), "passfile").value_or("")};
  for (const std::string service : kServices) {
    files.push_back((gpuaas::testing::RolePassfileDir(dsn()) / Role(service)).string());
  }
  ASSERT_FALSE(files[0].empty()) << "the fixture's DSN names its password file: " << dsn();
  std::string script;
  for (size_t i = 0; i < files.size(); ++i) {
    script += absl::StrCat("if cat '", files[i], "' >/dev/null 2>&1; then echo 'file", i,
                           " read'; else echo 'file", i, " refused'; fi\n");
  }
  const std::string cluster_dir = std::filesystem::path(files[0]).parent_path().string();
  script += Psql("socket", absl::StrCat("host=", cluster_dir, " port=", Port(),
                                        " user=postgres dbname=postgres"));
  const std::string out = RunInWorkload(script);
  for (size_t i = 0; i < files.size(); ++i) {
    EXPECT_EQ(Line(out, absl::StrCat("file", i)), absl::StrCat("file", i, " refused")) << files[i];
  }
  EXPECT_TRUE(Line(out, "socket").starts_with("socket rc=2 ")) << out;
  // The files are there, and each service reads its own (it connected with it).
  for (const std::string& file : files) EXPECT_TRUE(std::filesystem::exists(file)) << file;
}

// A stolen service role (a compromised service, or its password file) reaches its own schema
// only.
TEST_F(DatabaseAttackTest, ServiceRoleReadsAnotherServicesSchema) {
  const std::string stock = gpuaas::testing::ServiceDsn(dsn(), "stock");
  EXPECT_TRUE(db::ExecWithoutTransaction(stock, "SELECT count(*) FROM stock.specs").ok())
      << "its own schema";
  for (const std::string table :
       {"auth.users", "auth.signing_keys", "storage.accessors", "instance.instances"}) {
    const std::string select = "SELECT * FROM " + table;
    EXPECT_TRUE(db::ExecWithoutTransaction(dsn(), select).ok()) << table << " exists";
    EXPECT_FALSE(db::ExecWithoutTransaction(stock, select).ok()) << table;
  }
  absl::Status update = db::ExecWithoutTransaction(
      stock, "UPDATE auth.users SET global_role = 1 WHERE user_name = 'member-mallory'");
  EXPECT_FALSE(update.ok());
}

TEST_F(DatabaseAttackTest, ServiceRoleRunsProgramsOnTheHost) {
  const std::string stock = gpuaas::testing::ServiceDsn(dsn(), "stock");
  const std::string marker = (dir_.path() / "pwned").string();
  // A table of its own to copy into: what stops the attack is the program, not the table.
  ASSERT_TRUE(db::ExecWithoutTransaction(stock, "CREATE TABLE stock.attack (line text)").ok());
  EXPECT_FALSE(
      db::ExecWithoutTransaction(stock, "COPY stock.attack FROM PROGRAM 'touch " + marker + "'")
          .ok());
  EXPECT_FALSE(std::filesystem::exists(marker));
  EXPECT_FALSE(db::ExecWithoutTransaction(stock, "SELECT pg_read_file('/etc/hostname')").ok());
}

TEST_F(DatabaseAttackTest, ServiceRoleGrantsItselfMorePowers) {
  const std::string stock = gpuaas::testing::ServiceDsn(dsn(), "stock");
  for (const std::string& sql :
       {absl::StrCat("ALTER ROLE ", Role("stock"), " SUPERUSER"),
        absl::StrCat("CREATE ROLE ", Role("stock"), "_twin SUPERUSER LOGIN"),
        absl::StrCat("GRANT ", Role("auth"), " TO ", Role("stock")),
        std::string("CREATE DATABASE stolen"), std::string("CREATE TABLE public.planted (x int)"),
        absl::StrCat("ALTER SCHEMA auth OWNER TO ", Role("stock"))}) {
    EXPECT_FALSE(db::ExecWithoutTransaction(stock, sql).ok()) << sql;
  }
}

}  // namespace
}  // namespace gpuaas::platform_testing
