// gpuaas_loadgen: open-loop gRPC load at a fixed rate against one method, reporting latency
// percentiles measured from each call's scheduled send time. Wiring only.
#include <CLI/CLI.hpp>
#include <atomic>
#include <filesystem>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "bench/loadgen/methods.h"
#include "bench/loadgen/report.h"
#include "libs/client/auth_client.h"
#include "libs/client/channel.h"
#include "libs/client/endpoint.h"
#include "libs/client/settings.h"
#include "libs/common/files.h"

namespace gpuaas::bench {
namespace {

constexpr int kExitError = 1;
constexpr int kExitUsage = 2;
constexpr absl::Duration kLoginTimeout = absl::Seconds(10);

struct Flags {
  std::string addr;
  std::string auth_addr;
  std::string storage_id;
  std::string instance_id;
  std::string spec_name;
  std::string cmd;
  std::string method = "WhoAmI";
  double rate = 500;
  std::string duration = "30s";
  std::string warmup = "3s";
  std::string timeout = "5s";
  int max_in_flight = 1000;
  int connections = 1;
  std::string user;
  std::string password_file;
  std::string tenant;
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
  bool json = false;
};

int Fail(const absl::Status& s) {
  std::cerr << "error: " << absl::StatusCodeToString(s.code()) << ": " << s.message() << "\n";
  return kExitError;
}

absl::StatusOr<absl::Duration> ParsePositive(const std::string& flag, const std::string& v,
                                             bool allow_zero) {
  absl::Duration d;
  if (!absl::ParseDuration(v, &d) || d < absl::ZeroDuration() ||
      (!allow_zero && d == absl::ZeroDuration())) {
    return absl::InvalidArgumentError(absl::StrCat(flag, ": want a duration like 30s, got ", v));
  }
  return d;
}

// Logs in once before the run so token-checked methods measure only the token check.
absl::StatusOr<std::string> LoginOnce(const std::shared_ptr<grpc::Channel>& channel,
                                      const MethodArgs& args) {
  auth::v1::LoginRequest req;
  req.set_user_name(args.user);
  req.set_password(args.password);
  req.set_tenant_id(args.tenant);
  absl::StatusOr<auth::v1::LoginResponse> resp =
      client::AuthClient(channel, kLoginTimeout).Login(req);
  if (!resp.ok()) {
    return absl::Status(resp.status().code(),
                        absl::StrCat("login as ", args.user, ": ", resp.status().message()));
  }
  return resp->access_token();
}

// Spreads calls round-robin over several connections: one HTTP/2 connection is served by one
// server thread at a time in some stacks, which would cap the load below what we ask for.
Invoker RoundRobin(std::vector<Invoker> invokers) {
  auto next = std::make_shared<std::atomic<uint64_t>>(0);
  return [invokers = std::move(invokers), next](std::function<void(grpc::Status)> done) {
    invokers[next->fetch_add(1, std::memory_order_relaxed) % invokers.size()](std::move(done));
  };
}

int Run(const Flags& f) {
  const MethodSpec* method = FindMethod(f.method);
  if (method == nullptr) {
    std::cerr << "error: unknown --method " << f.method << ": want " << MethodNames() << "\n";
    return kExitUsage;
  }
  OpenLoopOptions options;
  options.rate = f.rate;
  options.max_in_flight = f.max_in_flight;
  MethodArgs args;
  for (auto [flag, value, out, zero] :
       {std::tuple{"--duration", &f.duration, &options.duration, false},
        std::tuple{"--warmup", &f.warmup, &options.warmup, true},
        std::tuple{"--timeout", &f.timeout, &args.timeout, false}}) {
    absl::StatusOr<absl::Duration> d = ParsePositive(flag, *value, zero);
    if (!d.ok()) {
      return Fail(d.status());
    }
    *out = *d;
  }
  // Same discovery as gpuaasctl; against a `tools/gpuaas up` stack the admin credentials from
  // stack.env are the default, so `gpuaas_loadgen --method WhoAmI` needs no flags at all.
  std::error_code ec;
  client::Settings settings(client::ProcessEnv(), std::filesystem::current_path(ec));
  client::Endpoint flags;
  flags.address = f.addr;
  flags.tls.ca_file = f.ca_file;
  flags.tls.cert_file = f.cert_file;
  flags.tls.key_file = f.key_file;
  absl::StatusOr<client::Endpoint> endpoint =
      client::ResolveEndpoint(method->server, flags, settings);
  // Tokens come from auth whatever the method's service.
  client::Endpoint auth_flags = flags;
  auth_flags.address = method->server == client::Service::kAuth ? f.addr : f.auth_addr;
  absl::StatusOr<client::Endpoint> auth_endpoint =
      client::ResolveEndpoint(client::Service::kAuth, auth_flags, settings);
  absl::StatusOr<std::string> user = settings.Get(f.user, "GPUAAS_ADMIN_USER");
  absl::StatusOr<std::string> password_file =
      settings.Get(f.password_file, "GPUAAS_ADMIN_PASSWORD_FILE");
  for (const absl::Status& s :
       {endpoint.status(), auth_endpoint.status(), user.status(), password_file.status()}) {
    if (!s.ok()) {
      return Fail(s);
    }
  }

  args.user = *user;
  args.tenant = f.tenant;
  args.storage_id = f.storage_id;
  args.instance_id = f.instance_id;
  args.spec_name = f.spec_name;
  args.cmd = f.cmd;
  if (!password_file->empty()) {
    absl::StatusOr<std::string> pw = ReadSecretFile(*password_file);
    if (!pw.ok()) {
      return Fail(pw.status());
    }
    args.password = *pw;
  }

  std::vector<Invoker> invokers;
  for (int i = 0; i < f.connections; ++i) {
    grpc::ChannelArguments channel_args;
    // Distinct arguments keep gRPC from sharing one subchannel (connection) between channels.
    channel_args.SetInt("gpuaas.loadgen.connection", i);
    absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
        client::OpenChannel(endpoint->address, endpoint->tls, channel_args);
    if (!channel.ok()) {
      return Fail(channel.status());
    }
    if (i == 0 && method->needs_token) {
      if (args.user.empty() || args.password.empty()) {
        std::cerr << "error: --method " << f.method << " needs --user and --password-file\n";
        return kExitUsage;
      }
      absl::StatusOr<std::shared_ptr<grpc::Channel>> auth_channel =
          client::OpenChannel(auth_endpoint->address, auth_endpoint->tls);
      if (!auth_channel.ok()) {
        return Fail(auth_channel.status());
      }
      absl::StatusOr<std::string> token = LoginOnce(*auth_channel, args);
      if (!token.ok()) {
        return Fail(token.status());
      }
      args.token = *token;
    }
    absl::StatusOr<Invoker> invoker = method->make(*channel, args);
    if (!invoker.ok()) {
      return Fail(invoker.status());
    }
    invokers.push_back(*std::move(invoker));
  }

  LatencyRecorder recorder;
  Report report;
  report.method = std::string(method->name);
  report.addr = endpoint->address;
  report.options = options;
  report.connections = f.connections;
  report.run = RunOpenLoop(RoundRobin(std::move(invokers)), options, recorder);
  report.latency = recorder.Summarize();
  std::cout << (f.json ? ReportJson(report).dump(2) + "\n" : ReportText(report));
  return report.latency.ok > 0 ? 0 : kExitError;
}

}  // namespace
}  // namespace gpuaas::bench

int main(int argc, char** argv) {
  gpuaas::bench::Flags f;
  CLI::App app("gpuaas_loadgen: fixed-rate (open-loop) gRPC load with latency percentiles");
  app.add_option("--addr", f.addr,
                 "host:port of the method's service (default: $GPUAAS_<SERVICE>_ADDR, "
                 ".gpuaas/stack.env, localhost:5005x)");
  app.add_option("--auth-addr", f.auth_addr,
                 "auth service for the token when the method is another service's (default: "
                 "$GPUAAS_AUTH_ADDR, .gpuaas/stack.env, localhost:17051)");
  app.add_option("--storage", f.storage_id, "storage id for GetStorage");
  app.add_option("--instance", f.instance_id,
                 "instance id for GetInstance; the id prefix of CreateInstance's instances");
  app.add_option("--spec", f.spec_name, "GPU spec of CreateInstance's instances");
  app.add_option("--cmd", f.cmd, "CreateInstance's workload command (default: exec sleep 86400)");
  app.add_option("--method", f.method, gpuaas::bench::MethodNames())->capture_default_str();
  app.add_option("--rate", f.rate, "calls per second")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--duration", f.duration, "measured window")->capture_default_str();
  app.add_option("--warmup", f.warmup, "unmeasured lead-in")->capture_default_str();
  app.add_option("--timeout", f.timeout, "deadline of each call")->capture_default_str();
  app.add_option("--concurrency-limit", f.max_in_flight,
                 "max calls in flight; a due call waits for a slot and the wait counts")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--connections", f.connections, "HTTP/2 connections to spread calls over")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  app.add_option("--user", f.user,
                 "user to log in as (default: GPUAAS_ADMIN_USER from the env or stack.env)");
  app.add_option("--password-file", f.password_file,
                 "file whose first line is the password (default: GPUAAS_ADMIN_PASSWORD_FILE)");
  app.add_option("--tenant", f.tenant, "tenant for the token and for GetTenant");
  app.add_option("--ca", f.ca_file, "CA certificate: use TLS (default: GPUAAS_TLS_CA)")
      ->check(CLI::ExistingFile);
  app.add_option("--cert", f.cert_file, "client certificate (GPUAAS_TLS_CERT)")
      ->check(CLI::ExistingFile);
  app.add_option("--key", f.key_file, "client key (GPUAAS_TLS_KEY)")->check(CLI::ExistingFile);
  app.add_flag("--json", f.json, "print the report as JSON");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return gpuaas::bench::Run(f);
}
