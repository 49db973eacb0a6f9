// instance_start_bench: how fast a warm-stock instance gets to RUNNING. Creates --count
// instances of a workload that opens its probe port at once, either one after another
// (--rate 0: each start alone, the latency budget) or at a fixed rate (--rate 50: the
// sustained-start budget), follows them on one WatchInstances stream, and reports the time
// from each CreateInstance call to the change that showed it RUNNING (median, p90, p99, max),
// the CreateInstance answer times, and the starts per second achieved. --image runs an image
// (its command and ports unless --cmd is given); --restarts N then stops N of them one at a
// time and times StartInstance → RUNNING of the stopped instance (GetInstance polled every 5 ms).
// Deletes what it made.
//
//   build/bench/instance/instance_start_bench --spec a100.1x --count 100 --rate 0
//
// Addresses and the login come from flags, the environment or .gpuaas/stack.env, as gpuaasctl's.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "libs/client/auth_client.h"
#include "libs/client/channel.h"
#include "libs/client/endpoint.h"
#include "libs/client/instance_client.h"
#include "libs/client/settings.h"

namespace {

namespace client = gpuaas::client;
namespace instancepb = ::gpuaas::instance::v1;

// A process that listens on its probe port as soon as it starts, and then only waits. Perl
// (perl-base, on every Debian) starts in milliseconds, so the budget measures the platform, not
// an interpreter's start-up.
constexpr char kDefaultCmd[] =
    "exec perl -MIO::Socket::INET -e '$s = IO::Socket::INET->new(LocalAddr => \"127.0.0.1\", "
    "LocalPort => $ENV{GPUAAS_PORT_8080}, Listen => 16, ReuseAddr => 1) or die $!; sleep 86400'";

struct Flags {
  std::string spec;
  std::string cmd = kDefaultCmd;
  int count = 100;
  double rate = 0;
  std::string prefix = "bench";
  std::string user;
  std::string password_file;
  std::string tenant;
  std::string auth_addr;
  std::string instance_addr;
  double timeout_seconds = 60;
  bool keep = false;
  bool no_probe = false;
  std::string image;
  int restarts = 0;
};

std::string Percentiles(std::vector<double> ms) {
  if (ms.empty()) return "none";
  std::sort(ms.begin(), ms.end());
  auto at = [&](double q) {
    return ms[std::min(ms.size() - 1, static_cast<size_t>(q * static_cast<double>(ms.size())))];
  };
  return absl::StrFormat("n=%d p50 %.1f ms  p90 %.1f ms  p99 %.1f ms  max %.1f ms", ms.size(),
                         at(0.5), at(0.9), at(0.99), ms.back());
}

int Run(const Flags& f) {
  const client::EnvLookup env = client::ProcessEnv();
  std::error_code ec;
  client::Settings settings(env, std::filesystem::current_path(ec));
  client::Endpoint flags;
  flags.address = f.auth_addr;
  auto auth_at = client::ResolveEndpoint(client::Service::kAuth, flags, settings);
  flags.address = f.instance_addr;
  auto instance_at = client::ResolveEndpoint(client::Service::kInstance, flags, settings);
  if (!auth_at.ok() || !instance_at.ok()) {
    std::cerr << "error: " << (auth_at.ok() ? instance_at.status() : auth_at.status()) << "\n";
    return 2;
  }
  const std::string user = settings.Get(f.user, "GPUAAS_ADMIN_USER").value_or("");
  const std::string password_file =
      settings.Get(f.password_file, "GPUAAS_ADMIN_PASSWORD_FILE").value_or("");
  std::string password;
  std::getline(std::ifstream(password_file), password);
  client::AuthClient auth(*client::OpenChannel(auth_at->address, auth_at->tls));
  client::authpb::LoginRequest login;
  login.set_user_name(user);
  login.set_password(password);
  login.set_tenant_id(f.tenant);
  auto logged_in = auth.Login(login);
  if (!logged_in.ok()) {
    std::cerr << "error: login as " << user << ": " << logged_in.status() << "\n";
    return 1;
  }
  const std::string token = logged_in->access_token();
  client::InstanceClient instances(*client::OpenChannel(instance_at->address, instance_at->tls));
  auto call = [&] { return client::CallContext().set_bearer_token(token); };

  // RUNNING times from the watch, by instance id.
  absl::Mutex mu;
  std::map<std::string, absl::Time> running;
  std::map<std::string, std::string> failed;
  bool synced = false;
  const absl::Duration watch_for =
      absl::Seconds(f.timeout_seconds + 60) +
      (f.rate > 0 ? absl::Seconds(f.count / f.rate) : f.count * absl::Seconds(f.timeout_seconds));
  std::thread watcher([&] {
    instancepb::WatchInstancesRequest req;
    (void)instances.WatchInstances(
        req,
        [&](const instancepb::InstanceChange& change) {
          const absl::Time now = absl::Now();
          absl::MutexLock lock(&mu);
          if (change.type() == instancepb::InstanceChange::TYPE_SYNCED) synced = true;
          const instancepb::Instance& i = change.instance();
          if (i.instance_id().rfind(f.prefix + "-", 0) != 0) return true;
          if (i.state() == instancepb::STATE_RUNNING) running.emplace(i.instance_id(), now);
          if (i.state() == instancepb::STATE_FAILED) {
            failed.emplace(i.instance_id(),
                           absl::StrCat(instancepb::Reason_Name(i.reason()), " ", i.message()));
          }
          return static_cast<int>(running.size() + failed.size()) < f.count;
        },
        // Ends by itself once every instance settled; when some creates failed that never
        // comes, so the stream ends when the run surely has.
        client::CallContext::FromDeadline(absl::Now() + watch_for).set_bearer_token(token));
  });
  {
    absl::MutexLock lock(&mu);
    mu.AwaitWithTimeout(absl::Condition(&synced), absl::Seconds(10));
  }

  const std::string run_id = absl::StrCat(absl::ToUnixSeconds(absl::Now()) % 100000);
  std::map<std::string, absl::Time> created_at;
  std::vector<double> answer_ms;
  const absl::Time began = absl::Now();
  // One create; in rate mode each leaves on its schedule from its own thread (open loop), so a
  // slow answer never lowers the rate.
  std::atomic<bool> create_failed{false};
  auto create = [&](int n) {
    instancepb::CreateInstanceRequest req;
    req.set_instance_id(absl::StrCat(f.prefix, "-", run_id, "-", n));
    req.set_spec_name(f.spec);
    req.set_image(f.image);
    if (!f.image.empty() && f.cmd == kDefaultCmd) {
      // The image's own command and probe port.
    } else if (f.no_probe) {
      req.mutable_template_()->set_cmd(f.cmd == kDefaultCmd ? "exec sleep 86400" : f.cmd);
    } else {
      req.mutable_template_()->set_cmd(f.cmd);
      instancepb::Port* port = req.mutable_template_()->add_ports();
      port->set_port(8080);
      port->set_protocol(instancepb::PROTOCOL_TCP);
      port->set_is_probe(true);
    }
    const absl::Time t0 = absl::Now();
    auto created = instances.CreateInstance(req, call());
    const absl::Time t1 = absl::Now();
    absl::MutexLock lock(&mu);
    if (!created.ok()) {
      std::cerr << "error: CreateInstance " << req.instance_id() << ": " << created.status()
                << "\n";
      create_failed = true;
      return std::string();
    }
    answer_ms.push_back(absl::ToDoubleMilliseconds(t1 - t0));
    created_at[req.instance_id()] = t0;
    return req.instance_id();
  };
  std::vector<std::thread> senders;
  for (int n = 0; n < f.count && !create_failed; ++n) {
    if (f.rate > 0) {
      absl::SleepFor(began + absl::Seconds(n / f.rate) - absl::Now());
      senders.emplace_back(create, n);
      continue;
    }
    const std::string id = create(n);  // one at a time: wait for this one before the next
    if (id.empty()) break;
    absl::MutexLock lock(&mu);
    auto settled = [&]() ABSL_SHARED_LOCKS_REQUIRED(mu) {
      return running.count(id) > 0 || failed.count(id) > 0;
    };
    mu.AwaitWithTimeout(absl::Condition(&settled), absl::Seconds(f.timeout_seconds));
  }
  for (std::thread& t : senders) t.join();
  const absl::Time submitted = absl::Now();
  {
    absl::MutexLock lock(&mu);
    auto all = [&]() ABSL_SHARED_LOCKS_REQUIRED(mu) {
      return running.size() + failed.size() >= created_at.size();
    };
    mu.AwaitWithTimeout(absl::Condition(&all), absl::Seconds(f.timeout_seconds));
  }
  std::vector<double> start_ms;
  absl::Time last_running = began;
  {
    absl::MutexLock lock(&mu);
    for (const auto& [id, t0] : created_at) {
      auto it = running.find(id);
      if (it == running.end()) continue;
      start_ms.push_back(absl::ToDoubleMilliseconds(it->second - t0));
      last_running = std::max(last_running, it->second);
    }
    for (const auto& [id, why] : failed) std::cerr << "failed: " << id << " " << why << "\n";
  }
  const double span = absl::ToDoubleSeconds(last_running - began);
  std::cout << "instances      " << created_at.size() << " created, " << start_ms.size()
            << " RUNNING, " << (created_at.size() - start_ms.size()) << " not\n";
  std::cout << "create answer  " << Percentiles(answer_ms) << "\n";
  std::cout << "create→RUNNING " << Percentiles(start_ms) << "\n";
  std::cout << absl::StrFormat("throughput     %.1f creates/s submitted, %.1f RUNNING/s\n",
                               static_cast<double>(created_at.size()) /
                                   std::max(1e-9, absl::ToDoubleSeconds(submitted - began)),
                               static_cast<double>(start_ms.size()) / std::max(1e-9, span));
  watcher.join();
  std::vector<double> restart_ms;
  for (const auto& [id, t0] : created_at) {
    if (static_cast<int>(restart_ms.size()) >= f.restarts) break;
    if (running.count(id) == 0) continue;
    // Polls id until it reaches `want`; the time it was first seen there, or nullopt.
    auto await = [&](instancepb::State want) -> std::optional<absl::Time> {
      const absl::Time deadline = absl::Now() + absl::Seconds(f.timeout_seconds);
      instancepb::GetInstanceRequest get;
      get.set_instance_id(id);
      while (absl::Now() < deadline) {
        auto got = instances.GetInstance(get, call());
        if (got.ok() && got->state() == want) return absl::Now();
        if (got.ok() && got->state() == instancepb::STATE_FAILED) return std::nullopt;
        absl::SleepFor(absl::Milliseconds(5));
      }
      return std::nullopt;
    };
    instancepb::StopInstanceRequest stop;
    stop.set_instance_id(id);
    if (!instances.StopInstance(stop, call()).ok() || !await(instancepb::STATE_STOPPED)) {
      std::cerr << "error: stopping " << id << "\n";
      continue;
    }
    instancepb::StartInstanceRequest start;
    start.set_instance_id(id);
    const absl::Time s0 = absl::Now();
    if (!instances.StartInstance(start, call()).ok()) continue;
    if (std::optional<absl::Time> up = await(instancepb::STATE_RUNNING)) {
      restart_ms.push_back(absl::ToDoubleMilliseconds(*up - s0));
    }
  }
  if (f.restarts > 0) std::cout << "start→RUNNING  " << Percentiles(restart_ms) << "\n";
  if (!f.keep) {
    for (const auto& [id, t0] : created_at) {
      instancepb::DeleteInstanceRequest del;
      del.set_instance_id(id);
      (void)instances.DeleteInstance(del, call());
    }
  }
  return start_ms.size() == created_at.size() && !created_at.empty() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Flags f;
  CLI::App app("instance_start_bench: CreateInstance → RUNNING on warm stock");
  app.add_option("--spec", f.spec, "GPU spec with available stocks")->required();
  app.add_option("--count", f.count, "instances to start")->capture_default_str();
  app.add_option("--rate", f.rate, "creates per second; 0 = one at a time")->capture_default_str();
  app.add_option("--cmd", f.cmd, "workload command; must listen on $GPUAAS_PORT_8080");
  app.add_option("--prefix", f.prefix, "instance id prefix")->capture_default_str();
  app.add_option("--user", f.user, "user (default: GPUAAS_ADMIN_USER)");
  app.add_option("--password-file", f.password_file, "(default: GPUAAS_ADMIN_PASSWORD_FILE)");
  app.add_option("--tenant", f.tenant, "tenant the instances belong to");
  app.add_option("--auth-addr", f.auth_addr, "auth service (default: env, stack.env)");
  app.add_option("--instance-addr", f.instance_addr, "instance service (default: env, stack.env)");
  app.add_option("--timeout", f.timeout_seconds, "seconds to wait for RUNNING")
      ->capture_default_str();
  app.add_flag("--keep", f.keep, "leave the instances running");
  app.add_flag("--no-probe", f.no_probe,
               "no port and no probe (RUNNING once the sandbox is up); the default command then "
               "only sleeps: many instances at little memory");
  app.add_option("--image", f.image, "image (name or name:version) the instances run");
  app.add_option("--restarts", f.restarts,
                 "then stop and start again this many, one at a time: start → RUNNING");
  CLI11_PARSE(app, argc, argv);
  return Run(f);
}
