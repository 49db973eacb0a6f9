// Terminals and port-forwards into real instances (InstanceSessionService): the instance
// service relays to the node's real agent, which runs the command inside the workload's runc
// container (as the workload's user) or connects inside its network namespace. Commands with
// and without a terminal (output, stdin, resize, the exit status), a port that only the
// workload's loopback serves, a refused port, the audit record, and `gpuaasctl instances exec`,
// `port-forward` and `tunnel` as a user runs them.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <pqxx/pqxx>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "libs/testing/eventually.h"
#include "libs/testing/pg_test.h"
#include "libs/testing/temp_dir.h"
#include "tests/common/child_process.h"
#include "tests/platform/platform_stack.h"

namespace gpuaas::platform_testing {
namespace {

namespace fs = std::filesystem;
using gpuaas::testing::Eventually;

// The workload: prints its uid, then serves an echo on 127.0.0.1:7000 (its loopback only: no
// host port reaches it) with the node's own python3.
constexpr char kEchoWorkload[] =
    "id -u; exec python3 -c '\n"
    "import socket\n"
    "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
    "s.bind((\"127.0.0.1\", 7000)); s.listen(8)\n"
    "while True:\n"
    "    c, _ = s.accept()\n"
    "    while True:\n"
    "        d = c.recv(65536)\n"
    "        if not d: break\n"
    "        c.sendall(d)\n"
    "    c.close()\n"
    "'";

struct ExecResult {
  grpc::Status status;
  std::string out;
  std::string err;
  int exit_code = -1;
};

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class InstanceSessionsTest : public gpuaas::testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped()) return;
    stack_ = std::make_unique<PlatformStack>(dsn(), dir_.path());
    token_ = stack_->CreateTenant("studio-a");
    stack_->CreateSpecWithStocks("a100.1x", "A100-80GB", 1, 0, 2);
    sessions_ = instancepb::InstanceSessionService::NewStub(
        grpc::CreateChannel(stack_->instance().address(), grpc::InsecureChannelCredentials()));
    instancepb::CreateInstanceRequest req;
    req.set_instance_id("nb-1");
    req.set_spec_name("a100.1x");
    req.mutable_template_()->set_cmd(kEchoWorkload);
    instancepb::Instance out;
    const grpc::Status s =
        stack_->instances().CreateInstance(PlatformStack::Ctx(token_).get(), req, &out);
    ASSERT_TRUE(s.ok()) << s.error_message();
    ASSERT_EQ(stack_
                  ->WaitInstance(token_, "nb-1",
                                 [](const instancepb::Instance& i) {
                                   return i.state() == instancepb::STATE_RUNNING;
                                 })
                  .state(),
              instancepb::STATE_RUNNING);
  }
  void TearDown() override {
    stack_.reset();
    PgTest::TearDown();
  }

  std::unique_ptr<grpc::ClientContext> Ctx(const std::string& token) {
    auto ctx = std::make_unique<grpc::ClientContext>();
    ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    ctx->AddMetadata("authorization", "Bearer " + token);
    return ctx;
  }

  // Runs `command` without a terminal, sending `input` then EOF.
  ExecResult Exec(const std::string& token, const std::string& instance_id,
                  std::vector<std::string> command, const std::string& input = "") {
    auto ctx = Ctx(token);
    auto stream = sessions_->ExecInstance(ctx.get());
    instancepb::ExecInstanceRequest start;
    start.mutable_start()->set_instance_id(instance_id);
    for (std::string& arg : command) start.mutable_start()->add_command(std::move(arg));
    stream->Write(start);
    if (!input.empty()) {
      instancepb::ExecInstanceRequest in;
      in.set_stdin(input);
      stream->Write(in);
    }
    instancepb::ExecInstanceRequest eof;
    eof.set_close_stdin(true);
    stream->Write(eof);
    ExecResult result;
    instancepb::ExecInstanceResponse resp;
    while (stream->Read(&resp)) {
      result.out += resp.stdout();
      result.err += resp.stderr();
      if (resp.kind_case() == instancepb::ExecInstanceResponse::kExitCode) {
        result.exit_code = resp.exit_code();
        stream->WritesDone();
      } else if (resp.aborted()) {
        stream->WritesDone();  // the node broke it off; Finish says why
      }
    }
    result.status = stream->Finish();
    return result;
  }

  // A logged-in gpuaasctl's command line (the token through the environment, never argv).
  std::string Ctl(const std::string& args) {
    return absl::StrCat("env -i HOME='", dir_.path().string(), "' GPUAAS_TOKEN=\"$CTL_TOKEN\" ",
                        "GPUAAS_INSTANCE_ADDR=", stack_->instance().address(), " '",
                        GPUAAS_CTL_BINARY, "' ", args);
  }

  gpuaas::testing::TempDir dir_;
  std::unique_ptr<PlatformStack> stack_;
  std::string token_;
  std::unique_ptr<instancepb::InstanceSessionService::Stub> sessions_;
};

TEST_F(InstanceSessionsTest, ACommandRunsInsideAsTheWorkloadsUserWithItsExitStatus) {
  ExecResult r =
      Exec(token_, "nb-1", {"sh", "-c", "echo out; echo err >&2; cat; exit 3"}, "from stdin\n");
  ASSERT_TRUE(r.status.ok()) << r.status.error_message();
  EXPECT_EQ(r.out, "out\nfrom stdin\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_EQ(r.exit_code, 3);

  // Inside the workload's container, as its user: the owner of its pid 1 (the workload's own
  // process, in its own PID namespace), with no capability (the container's root is an
  // unprivileged user of the node) and its seccomp filter and no_new_privs.
  ExecResult who = Exec(token_, "nb-1",
                        {"sh", "-c",
                         "id -u; stat -c %u /proc/1; grep -E '^(CapEff|NoNewPrivs|Seccomp):' "
                         "/proc/self/status; cat /proc/1/cmdline"});
  ASSERT_EQ(who.exit_code, 0) << who.err;
  std::vector<std::string> lines = absl::StrSplit(who.out, '\n');
  ASSERT_GE(lines.size(), 6u) << who.out;
  EXPECT_EQ(lines[0], lines[1]) << who.out;
  EXPECT_EQ(lines[2], "CapEff:\t0000000000000000") << who.out;
  EXPECT_EQ(lines[3], "NoNewPrivs:\t1") << who.out;
  EXPECT_EQ(lines[4], "Seccomp:\t2") << who.out;
  EXPECT_NE(lines[5].find("python3"), std::string::npos) << who.out;

  // A program that does not exist: the command's own failure, not the session's.
  ExecResult missing = Exec(token_, "nb-1", {"/no/such/program"});
  ASSERT_TRUE(missing.status.ok()) << missing.status.error_message();
  EXPECT_NE(missing.exit_code, 0);
}

TEST_F(InstanceSessionsTest, ATerminalTakesKeysAndResizes) {
  auto ctx = Ctx(token_);
  auto stream = sessions_->ExecInstance(ctx.get());
  instancepb::ExecInstanceRequest start;
  start.mutable_start()->set_instance_id("nb-1");
  start.mutable_start()->add_command("sh");
  start.mutable_start()->set_tty(true);
  start.mutable_start()->mutable_size()->set_rows(30);
  start.mutable_start()->mutable_size()->set_cols(100);
  ASSERT_TRUE(stream->Write(start));
  std::string screen;
  instancepb::ExecInstanceResponse resp;
  auto type = [&](const std::string& keys, const std::string& until) {
    instancepb::ExecInstanceRequest in;
    in.set_stdin(keys);
    EXPECT_TRUE(stream->Write(in));
    while (screen.find(until) == std::string::npos && stream->Read(&resp)) {
      EXPECT_TRUE(resp.stderr().empty()) << "a terminal has one output";
      screen += resp.stdout();
    }
    return screen.find(until) != std::string::npos;
  };
  EXPECT_TRUE(type("stty size; echo $((6*7))x\r", "42x")) << screen;
  EXPECT_NE(screen.find("30 100"), std::string::npos) << screen;
  instancepb::ExecInstanceRequest resize;
  resize.mutable_resize()->set_rows(50);
  resize.mutable_resize()->set_cols(132);
  ASSERT_TRUE(stream->Write(resize));
  EXPECT_TRUE(type("stty size\r", "50 132")) << screen;
  // The terminal's keys reach the command as typed: ^C interrupts the foreground program.
  EXPECT_TRUE(type("sleep 100\r", "sleep 100")) << screen;
  EXPECT_TRUE(type(std::string("\x03") + "echo back$((1+1))\r", "back2")) << screen;

  instancepb::ExecInstanceRequest bye;
  bye.set_stdin("exit 5\r");
  stream->Write(bye);
  int exit_code = -1;
  while (stream->Read(&resp)) {
    if (resp.kind_case() == instancepb::ExecInstanceResponse::kExitCode) {
      exit_code = resp.exit_code();
      stream->WritesDone();
    }
  }
  EXPECT_TRUE(stream->Finish().ok());
  EXPECT_EQ(exit_code, 5);
}

TEST_F(InstanceSessionsTest, APortOnTheWorkloadsLoopbackIsForwarded) {
  auto ctx = Ctx(token_);
  auto stream = sessions_->ForwardInstancePort(ctx.get());
  instancepb::ForwardInstancePortRequest start;
  start.mutable_start()->set_instance_id("nb-1");
  start.mutable_start()->set_port(7000);
  ASSERT_TRUE(stream->Write(start));
  const std::string big(200000, 'x');  // more than one message each way
  instancepb::ForwardInstancePortRequest data;
  data.set_data("ping\n");
  ASSERT_TRUE(stream->Write(data));
  for (size_t at = 0; at < big.size(); at += 50000) {
    data.set_data(big.substr(at, 50000));
    ASSERT_TRUE(stream->Write(data));
  }
  std::string echoed;
  instancepb::ForwardInstancePortResponse resp;
  while (echoed.size() < big.size() + 5 && stream->Read(&resp)) echoed += resp.data();
  EXPECT_EQ(echoed, "ping\n" + big);
  // Our half-close reaches the workload as EOF; its close comes back as `closed`.
  stream->WritesDone();
  bool closed = false;
  while (stream->Read(&resp)) closed = closed || resp.closed();
  EXPECT_TRUE(closed);
  const grpc::Status end = stream->Finish();
  EXPECT_TRUE(end.ok()) << end.error_message();

  // Nothing listens on 7001: refused, as a connection there would be.
  auto ctx2 = Ctx(token_);
  auto refused = sessions_->ForwardInstancePort(ctx2.get());
  start.mutable_start()->set_port(7001);
  refused->Write(start);
  refused->WritesDone();
  while (refused->Read(&resp)) {
  }
  const grpc::Status s = refused->Finish();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << s.error_message();
  EXPECT_NE(s.error_message().find("connection refused"), std::string::npos) << s.error_message();
}

// The node breaks a session off (its agent dies mid-command): the caller, still sending, hears
// the node's error at once (`aborted`, then the status) instead of a cancel after a wait.
TEST_F(InstanceSessionsTest, ASessionTheNodeBreaksOffEndsWithTheNodesError) {
  auto ctx = Ctx(token_);
  auto stream = sessions_->ExecInstance(ctx.get());
  instancepb::ExecInstanceRequest start;
  start.mutable_start()->set_instance_id("nb-1");
  for (const char* arg : {"sh", "-c", "echo started; exec cat"}) {
    start.mutable_start()->add_command(arg);
  }
  ASSERT_TRUE(stream->Write(start));
  instancepb::ExecInstanceResponse resp;
  ASSERT_TRUE(stream->Read(&resp));
  EXPECT_EQ(resp.stdout(), "started\n");
  stack_->agent("node-a").Kill();
  bool aborted = false;
  while (stream->Read(&resp)) {
    if (resp.aborted()) {
      aborted = true;
      stream->WritesDone();
    }
  }
  EXPECT_TRUE(aborted);
  const grpc::Status s = stream->Finish();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << s.error_message();
}

TEST_F(InstanceSessionsTest, EachSessionIsRecorded) {
  ASSERT_EQ(Exec(token_, "nb-1", {"true"}).exit_code, 0);
  pqxx::connection db(dsn());
  pqxx::work tx(db);
  const pqxx::result rows = tx.exec(
      "SELECT kind, detail, node_id, outcome, close_time IS NOT NULL, user_id <> '' "
      "FROM instance.sessions WHERE instance_id = 'nb-1'");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0].as<std::string>(), "exec");
  EXPECT_EQ(rows[0][1].as<std::string>(), "true");
  EXPECT_EQ(rows[0][2].as<std::string>(), "node-a");
  EXPECT_EQ(rows[0][3].as<std::string>(), "exit 0");
  EXPECT_TRUE(rows[0][4].as<bool>());
  EXPECT_TRUE(rows[0][5].as<bool>());
}

TEST_F(InstanceSessionsTest, GpuaasctlExecPortForwardAndTunnel) {
  setenv("CTL_TOKEN", token_.c_str(), 1);
  const fs::path out = dir_.path() / "ctl.out";
  const fs::path err = dir_.path() / "ctl.err";
  // exec without a terminal: separate streams, stdin passed, the command's status is ours.
  const std::string exec = Ctl(absl::StrCat(
      "instances exec nb-1 -- sh -c 'read line; echo got:$line; echo oops >&2; exit 7' "
      "< /dev/stdin > '",
      out.string(), "' 2> '", err.string(), "'"));
  const int code = std::system(absl::StrCat("echo hello | ", exec).c_str());
  EXPECT_EQ(WEXITSTATUS(code), 7) << ReadFile(err);
  EXPECT_EQ(ReadFile(out), "got:hello\n");
  EXPECT_EQ(ReadFile(err), "oops\n");

  // tunnel: one connection on stdin and stdout (what ssh's ProxyCommand runs).
  const int tunnel =
      std::system(absl::StrCat("printf 'through the tunnel' | ", Ctl("instances tunnel nb-1 7000"),
                               " > '", out.string(), "' 2> '", err.string(), "'")
                      .c_str());
  EXPECT_EQ(WEXITSTATUS(tunnel), 0) << ReadFile(err);
  EXPECT_EQ(ReadFile(out), "through the tunnel");

  // port-forward: a local port, every connection to it reaching the workload's 7000.
  gpuaas::testing::ChildProcess forward(
      {"/bin/sh", "-c", "exec " + Ctl("instances port-forward nb-1 0:7000")},
      (dir_.path() / "pf.out").string());
  int local = 0;
  ASSERT_TRUE(Eventually([&] {
    const std::string line = ReadFile(dir_.path() / "pf.out");
    return std::sscanf(line.c_str(), "Forwarding from 127.0.0.1:%d", &local) == 1;
  })) << ReadFile(dir_.path() / "pf.out");
  for (int i = 0; i < 2; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<uint16_t>(local));
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to), 0);
    const std::string hello = absl::StrCat("connection ", i);
    ASSERT_EQ(write(fd, hello.data(), hello.size()), static_cast<ssize_t>(hello.size()));
    shutdown(fd, SHUT_WR);
    std::string got;
    char buf[256];
    for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) got.append(buf, static_cast<size_t>(n));
    close(fd);
    EXPECT_EQ(got, hello);
  }
  unsetenv("CTL_TOKEN");
}

}  // namespace
}  // namespace gpuaas::platform_testing
