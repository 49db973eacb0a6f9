#include "libs/service/process_flags.h"

#include <algorithm>
#include <cctype>

#include "absl/strings/str_cat.h"
#include "libs/client/channel.h"
#include "libs/common/files.h"
#include "libs/rpc/metrics_endpoint.h"
#include "libs/rpc/process_metrics.h"
#include "libs/service/env_options.h"

namespace gpuaas::service {

std::string EnvName(std::string_view process, std::string_view flag) {
  std::string name = "GPUAAS_";
  for (char c : process) {
    name += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  name += '_';
  name += flag;
  return name;
}

std::string FlagEnvName(std::string_view process, std::string_view names) {
  std::string_view name = names.substr(0, names.find(','));
  name.remove_prefix(std::min(name.find_first_not_of('-'), name.size()));
  std::string flag;
  for (char c : name) {
    flag += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return EnvName(process, flag);
}

void AddProcessFlags(CLI::App& app, const ServiceIdentity& id, ServerKind kind, ProcessFlags& f) {
  const bool grpc = kind == ServerKind::kGrpc;
  f.kind = kind;
  app.footer(
      "A peer's address (--*-addr) is host:port, or its replicas as host:port,host:port: calls\n"
      "spread over them, and reads and keyed creates a dropped replica did not answer are retried\n"
      "on another.");
  f.listen = "0.0.0.0:" + std::to_string(id.grpc_port);
  f.metrics_listen = "0.0.0.0:" + std::to_string(id.metrics_port);
  EnvOptions options(app, id.name);
  options.Add("--listen,--listen-address", f.listen,
              grpc ? "gRPC listen address; port 0 picks a free one"
                   : "HTTP(S) listen address; port 0 picks a free one");
  options.Add("--metrics-listen,--metrics-address", f.metrics_listen,
              "Prometheus /metrics address ('' = off)");
  if (grpc) {
    options.Add("--workers", f.workers, "handler threads")->check(CLI::Range(1, 512));
    options
        .Add("--max-public-streams-per-client", f.max_public_streams_per_client,
             "Health/Watch and reflection streams (no token needed) one client address may hold")
        ->check(CLI::Range(1, 100000));
  } else {
    options.Add("--io-threads", f.workers, "threads serving connections")->check(CLI::Range(1, 64));
  }
  options.Add("--log-level", f.log_level)
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
  options
      .Add("--tls-cert", f.tls.cert_file,
           grpc ? "certificate (PEM): served, and presented to peers with --tls-ca"
                : "serve HTTPS with this (wildcard) certificate (PEM)")
      ->check(CLI::ExistingFile);
  options.Add("--tls-key", f.tls.key_file, "private key (PEM) of --tls-cert")
      ->check(CLI::ExistingFile);
  options
      .Add("--tls-ca", f.tls.ca_file,
           grpc ? "CA (PEM): verifies peers (TLS towards them) and client certificates"
                : "CA (PEM) verifying peers (TLS towards them)")
      ->check(CLI::ExistingFile);
  if (grpc) {
    options.Add("--tls-require-client-cert", f.tls.require_client_cert,
                "refuse clients without a certificate signed by --tls-ca");
  } else {
    options
        .Add("--tls-client-cert", f.tls_client_cert,
             "certificate (PEM) presented to peers (mutual TLS)")
        ->check(CLI::ExistingFile);
    options.Add("--tls-client-key", f.tls_client_key, "private key (PEM) of --tls-client-cert")
        ->check(CLI::ExistingFile);
  }
}

absl::StatusOr<absl::Duration> ParseDurationFlag(std::string_view flag, std::string_view text,
                                                 bool allow_zero) {
  absl::Duration d;
  const std::string t(text);
  if (!absl::ParseDuration(t, &d) || d < absl::ZeroDuration() || d == absl::InfiniteDuration() ||
      (d == absl::ZeroDuration() && !allow_zero)) {
    return absl::InvalidArgumentError(absl::StrCat(std::string(flag), ": want a ",
                                                   allow_zero ? "" : "positive ",
                                                   "duration like 30s or 200ms, got \"", t, "\""));
  }
  return d;
}

absl::StatusOr<std::string> ReadApiKey(const PeerFlags& peers) {
  if (peers.api_key_file.empty()) {
    return absl::InvalidArgumentError("--api-key-file is required (a SERVICE-role key)");
  }
  absl::StatusOr<std::string> key = ReadSecretFile(peers.api_key_file);
  if (!key.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--api-key-file: ", key.status().message()));
  }
  return key;
}

absl::Status ValidateProcessFlags(const ProcessFlags& f) {
  if (f.tls.cert_file.empty() != f.tls.key_file.empty()) {
    return absl::InvalidArgumentError("--tls-cert and --tls-key go together");
  }
  if (f.tls.require_client_cert && f.tls.ca_file.empty()) {
    return absl::InvalidArgumentError("--tls-require-client-cert needs --tls-ca");
  }
  if (f.tls_client_cert.empty() != f.tls_client_key.empty()) {
    return absl::InvalidArgumentError("--tls-client-cert and --tls-client-key go together");
  }
  return absl::OkStatus();
}

client::TlsOptions PeerTlsOptions(const ProcessFlags& f) {
  if (f.kind == ServerKind::kGrpc && !f.tls.ca_file.empty()) {
    return {.ca_file = f.tls.ca_file, .cert_file = f.tls.cert_file, .key_file = f.tls.key_file};
  }
  return {.ca_file = f.tls.ca_file, .cert_file = f.tls_client_cert, .key_file = f.tls_client_key};
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> OpenPeerChannel(const ProcessFlags& f,
                                                               const std::string& address) {
  return client::OpenChannel(address, PeerTlsOptions(f));
}

rpc::ServerOptions ServerOptionsFor(const ServiceIdentity& id, const ProcessFlags& f) {
  return {.name = std::string(id.name),
          .listen_address = f.listen,
          .metrics_address = f.metrics_listen,
          .tls = f.tls,
          .worker_threads = f.workers,
          .max_public_streams_per_client = f.max_public_streams_per_client};
}

absl::StatusOr<std::unique_ptr<rpc::MetricsEndpoint>> StartMetrics(
    const ProcessFlags& f, std::vector<std::shared_ptr<prometheus::Collectable>> collectables) {
  if (f.metrics_listen.empty()) {
    return nullptr;
  }
  collectables.push_back(std::make_shared<rpc::ProcessMetrics>());
  return rpc::MetricsEndpoint::Start(f.metrics_listen, std::move(collectables));
}

}  // namespace gpuaas::service
