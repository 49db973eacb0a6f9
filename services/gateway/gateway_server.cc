#include "services/gateway/gateway_server.h"

#include <chrono>
#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "libs/common/logging.h"
#include "services/gateway/request_transcoder.h"
#include "services/gateway/seed_compat.h"
#include "services/gateway/static_files.h"
#include "services/gateway/status_json.h"
#include "services/gateway/stream_grants.h"

namespace gpuaas::gateway {
namespace {

constexpr absl::string_view kJson = "application/json";
constexpr absl::string_view kAuthService = "gpuaas.auth.v1.AuthService";

// The console's pages load only our own scripts and styles, talk only to us and to the S3
// endpoint (the file browser), and no other site may frame them.
// style-src allows inline styles because the terminal (xterm.js) sizes its cells with <style>
// elements it writes; scripts stay 'self' only.
std::string ConsoleCsp(const std::string& s3_endpoint) {
  return absl::StrCat(
      "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
      "connect-src 'self'",
      s3_endpoint.empty() ? "" : " ", s3_endpoint,
      "; frame-ancestors 'none'; base-uri 'none'; form-action 'self'");
}

// Whether browsers reach us over https: our own TLS, or TLS ended in front of us. The
// console's cookies are then Secure, and its page's Origin is https://.
bool PagesAreHttps(const GatewayOptions& options) {
  return options.secure_cookies || !options.tls_cert_file.empty();
}

void Answer(http::HttpResponse& res, int status, std::string body) {
  res.status = status;
  res.set_content(std::move(body), std::string(kJson));
}

// The request body, up to `limit` bytes; INVALID_ARGUMENT past it, UNAVAILABLE when the client
// stopped sending.
absl::StatusOr<std::string> ReadBody(const http::ContentReader* reader, size_t limit) {
  std::string body;
  if (reader == nullptr) {
    return body;
  }
  bool too_big = false;
  const bool whole = (*reader)([&](const char* data, size_t size) {
    if (body.size() + size > limit) {
      too_big = true;
      return false;
    }
    body.append(data, size);
    return true;
  });
  if (too_big) {
    return absl::InvalidArgumentError(absl::StrCat("body: larger than ", limit, " bytes"));
  }
  if (!whole) {
    return absl::UnavailableError("body: the client stopped sending");
  }
  return body;
}

std::unique_ptr<grpc::ClientContext> ContextFor(const std::string& authorization,
                                                std::optional<absl::Duration> timeout) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  if (!authorization.empty()) {
    ctx->AddMetadata("authorization", authorization);
  }
  if (timeout) {
    ctx->set_deadline(std::chrono::system_clock::now() + absl::ToChronoMilliseconds(*timeout));
  }
  return ctx;
}

}  // namespace

// One event stream being served: its call (to cancel when the client leaves or the gateway
// stops) and the lock that keeps the keep-alive comments and the events from interleaving.
struct GatewayServer::OpenStream {
  std::string client;
  std::shared_ptr<grpc::ClientContext> ctx;
  // The caller's credentials, asked about again every stream_recheck (stream_grants.h). A
  // secret: never logged.
  std::string authorization;
  absl::Time checked;  // when they last held; touched by the keep-alive thread only

  // Ends the stream because its caller may no longer have it: its call is cancelled, and the
  // serving thread answers `why` instead of the cancellation.
  void Revoke(const absl::Status& why) {
    {
      absl::MutexLock lock(&revoked_mu);
      revoked = why;
    }
    ctx->TryCancel();
  }
  // OK unless Revoke was called.
  absl::Status Revoked() {
    absl::MutexLock lock(&revoked_mu);
    return revoked;
  }
  absl::Mutex revoked_mu;
  absl::Status revoked ABSL_GUARDED_BY(revoked_mu);
  absl::Mutex write_mu;
  // Set while the first message is awaited (nothing is written yet, so only asking the
  // connection tells whether the client left).
  const http::HttpRequest* awaiting_first ABSL_GUARDED_BY(write_mu) = nullptr;
  http::DataSink* sink ABSL_GUARDED_BY(write_mu) = nullptr;  // set while the body is written

  // False when the client is gone (the call is then cancelled).
  bool Write(absl::string_view text) {
    absl::MutexLock lock(&write_mu);
    return WriteLocked(text);
  }
  // A keep-alive comment, unless the body is being written now (then the client is being heard
  // from anyway); before the body, a look whether the client left.
  void Ping() {
    if (!write_mu.TryLock()) return;
    if (sink != nullptr) {
      WriteLocked(": keep-alive\n\n");
    } else if (awaiting_first != nullptr && awaiting_first->client_gone()) {
      ctx->TryCancel();
    }
    write_mu.Unlock();
  }
  // Until the first message arrives, Ping asks `req`'s connection whether the client left.
  void AwaitFirst(const http::HttpRequest* req) {
    absl::MutexLock lock(&write_mu);
    awaiting_first = req;
  }

 private:
  bool WriteLocked(absl::string_view text) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu) {
    if (sink == nullptr || !sink->write(text.data(), text.size())) {
      sink = nullptr;
      ctx->TryCancel();
      return false;
    }
    return true;
  }
};

GatewayServer::GatewayServer(GatewayOptions options, const RouteTable& routes,
                             const Backends& backends, const client::AuthClient& auth,
                             const Clock& clock)
    : options_(std::move(options)),
      routes_(routes),
      backends_(backends),
      auth_(auth),
      sessions_(auth, CookieOptions{.secure = PagesAreHttps(options_)}, clock, options_.vouching),
      terminals_(backends.Channel("gpuaas.instance.v1.InstanceService")) {
  transport_ = std::make_unique<http::HttpTransport>(
      http::HttpTransportOptions{.host = options_.host,
                                 .port = options_.port,
                                 .threads = options_.threads,
                                 .tls_cert_file = options_.tls_cert_file,
                                 .tls_key_file = options_.tls_key_file,
                                 .limits = options_.limits,
                                 .name = "gateway",
                                 .over_cap_body = StatusJson(absl::UnavailableError(
                                     "too many connections from your address")),
                                 .over_cap_content_type = std::string(kJson)},
      [this](const http::HttpRequest& req, http::HttpResponse& res,
             const http::ContentReader* body) { Handle(req, res, body); });
}

GatewayServer::~GatewayServer() { Stop(); }

absl::Status GatewayServer::Start() {
  if (absl::Status s = transport_->Start(); !s.ok()) {
    return s;
  }
  keepalive_ = std::thread([this] { KeepStreamsAlive(); });
  return absl::OkStatus();
}

void GatewayServer::Stop() {
  if (stopping_.exchange(true)) {
    return;
  }
  {
    absl::MutexLock lock(&streams_mu_);
    for (auto& [key, stream] : streams_) stream->ctx->TryCancel();
  }
  {
    absl::MutexLock lock(&keepalive_mu_);
    keepalive_cv_.SignalAll();
  }
  if (keepalive_.joinable()) keepalive_.join();
  transport_->Stop();
}

void GatewayServer::KeepStreamsAlive() {
  // Woken often enough for both jobs: a stream is re-checked at most a quarter of the bound
  // late.
  const absl::Duration tick = std::min(options_.stream_keepalive, options_.stream_recheck / 4);
  absl::Time last_ping = absl::Now();
  absl::MutexLock wait_lock(&keepalive_mu_);
  while (!stopping_.load()) {
    keepalive_cv_.WaitWithTimeout(&keepalive_mu_, tick);
    if (stopping_.load()) break;
    std::vector<std::shared_ptr<OpenStream>> open;
    {
      absl::MutexLock lock(&streams_mu_);
      for (auto& [key, stream] : streams_) open.push_back(stream);
    }
    RecheckStreams(open);
    if (absl::Now() - last_ping >= options_.stream_keepalive) {
      last_ping = absl::Now();
      for (const std::shared_ptr<OpenStream>& stream : open) stream->Ping();
    }
  }
}

void GatewayServer::RecheckStreams(const std::vector<std::shared_ptr<OpenStream>>& open) {
  // One WhoAmI per token per round, however many tabs stream on it.
  absl::flat_hash_map<std::string, absl::Status> answers;
  for (const std::shared_ptr<OpenStream>& stream : open) {
    const absl::Time now = absl::Now();
    if (now - stream->checked < options_.stream_recheck || stopping_.load()) continue;
    auto [it, fresh] = answers.try_emplace(stream->authorization);
    if (fresh) {
      it->second = StillMayStream(auth_, stream->authorization,
                                  std::min(options_.call_timeout, absl::Seconds(5)));
    }
    const absl::Status& answer = it->second;
    if (answer.ok()) {
      stream->checked = now;
    } else if (answer.code() != absl::StatusCode::kUnavailable &&
               answer.code() != absl::StatusCode::kDeadlineExceeded) {
      Logger("gateway")->info("ending an event stream from {}: {}", stream->client,
                              std::string(answer.message()));
      stream->Revoke(answer);
    }
  }
}

void GatewayServer::Handle(const http::HttpRequest& req, http::HttpResponse& res,
                           const http::ContentReader* reader) {
  const absl::Time start = absl::Now();
  absl::string_view target = req.target;
  absl::string_view path = target.substr(0, target.find('?'));
  absl::string_view query =
      path.size() < target.size() ? target.substr(path.size() + 1) : absl::string_view();
  res.set_header("X-Content-Type-Options", "nosniff");

  size_t declared = 0;
  const bool too_big = absl::SimpleAtoi(req.get_header_value("Content-Length"), &declared) &&
                       declared > options_.max_body_bytes;
  absl::StatusOr<std::string> body =
      too_big ? absl::StatusOr<std::string>(absl::InvalidArgumentError(
                    absl::StrCat("body: larger than ", options_.max_body_bytes, " bytes")))
              : ReadBody(reader, options_.max_body_bytes);
  if (!body.ok()) {
    Fail(res, body.status());
    // Past the limit it is 413, and the rest of the body is never read.
    if (body.status().code() == absl::StatusCode::kInvalidArgument) res.status = 413;
  } else if (path == "/healthz") {
    // The process serves; whether the services behind it do is each call's answer.
    Answer(res, 200, R"({"status":"SERVING"})");
  } else if (path == "/api/config" && req.method == "GET") {
    Answer(res, 200, nlohmann::json{{"s3_endpoint", options_.s3_endpoint}}.dump());
  } else if (SessionEndpoints::Serves(path)) {
    sessions_.Handle(req, path, *body, PagesAreHttps(options_), res);
  } else if (std::optional<std::string> terminal = TerminalSockets::InstanceOf(path)) {
    if (absl::Status s = terminals_.Serve(req, *terminal, query, PagesAreHttps(options_), res);
        !s.ok()) {
      Fail(res, s);
    }
  } else if (std::optional<RouteMatch> match = routes_.Find(req.method, path)) {
    ServeRest(req, *match, query, *body, res);
  } else if (routes_.HasPath(path)) {
    // No CORS preflight is answered either: no other site's page may call this API.
    FailMethodNotAllowed(res, req.method, path);
  } else if (const StaticFile* file = FindStaticFile(std::string_view(path.data(), path.size()));
             file != nullptr && (req.method == "GET" || req.method == "HEAD")) {
    res.status = 200;
    res.set_content(std::string(file->content), std::string(file->content_type));
    res.set_header("Content-Security-Policy", ConsoleCsp(options_.s3_endpoint));
    res.set_header("X-Frame-Options", "DENY");
    res.set_header("Referrer-Policy", "no-referrer");
    res.set_header("Cache-Control", "no-cache");
  } else {
    Fail(res, absl::NotFoundError(absl::StrCat(path, ": no such page or API path")));
  }
  Logger("gateway")->info("{} {} {} {}ms", req.method, std::string(path), res.status,
                          absl::ToInt64Milliseconds(absl::Now() - start));
}

void GatewayServer::ServeRest(const http::HttpRequest& req, const RouteMatch& match,
                              absl::string_view query, absl::string_view body,
                              http::HttpResponse& res) {
  res.set_header("Cache-Control", "no-store");
  absl::StatusOr<std::string> authorization = AuthorizationOf(req, PagesAreHttps(options_));
  if (!authorization.ok()) {
    return Fail(res, authorization.status());
  }
  const bool seed = IsSeedRoute(*match.route);
  absl::StatusOr<std::string> seed_body =
      seed ? SeedRequestBody(body) : absl::StatusOr<std::string>(std::string(body));
  if (!seed_body.ok()) {
    return Fail(res, seed_body.status());
  }
  absl::StatusOr<std::unique_ptr<google::protobuf::Message>> request =
      TranscodeRequest(match, query, *seed_body);
  if (!request.ok()) {
    return Fail(res, request.status());
  }
  if (match.route->server_streaming()) {
    return ServeStream(req, match, **request, *authorization, res);
  }
  std::unique_ptr<grpc::ClientContext> ctx = ContextFor(*authorization, options_.call_timeout);
  // Login and ExchangeApiKey are throttled by the client's address: auth hears it from us.
  if (match.route->method->service()->full_name() == kAuthService) {
    options_.vouching.Vouch(req, *ctx);
  }
  std::unique_ptr<google::protobuf::Message> response;
  grpc::Status status = backends_.Call(*match.route->method, **request, *ctx, response);
  if (!status.ok()) {
    return Fail(res, status);
  }
  Answer(res, 200, seed ? SeedAnswer(*response) : MessageToJson(*response));
}

void GatewayServer::ServeStream(const http::HttpRequest& req, const RouteMatch& match,
                                const google::protobuf::Message& request,
                                const std::string& authorization, http::HttpResponse& res) {
  const std::string& client = req.remote_addr;
  auto stream = std::make_shared<OpenStream>();
  stream->client = client;
  stream->ctx = ContextFor(authorization, std::nullopt);
  stream->authorization = authorization;
  stream->checked = absl::Now();
  {
    absl::MutexLock lock(&streams_mu_);
    int& from_client = streams_per_client_[client];
    if (static_cast<int>(streams_.size()) >= options_.max_streams ||
        from_client >= options_.max_streams_per_client) {
      if (from_client == 0) streams_per_client_.erase(client);
      return Fail(res, absl::ResourceExhaustedError(
                           "too many event streams open: close one (another tab?) and retry"));
    }
    ++from_client;
    streams_[stream.get()] = stream;
  }
  auto forget = [this, key = stream.get(), client] {
    absl::MutexLock lock(&streams_mu_);
    streams_.erase(key);
    if (--streams_per_client_[client] == 0) streams_per_client_.erase(client);
  };
  grpc::ClientContext& ctx = *stream->ctx;
  if (stopping_.load()) ctx.TryCancel();
  absl::StatusOr<std::unique_ptr<Backends::Stream>> call =
      backends_.OpenStream(*match.route->method, request, ctx);
  if (!call.ok()) {
    forget();
    return Fail(res, call.status());
  }
  // The first message decides the answer: a stream that fails before it (another tenant's
  // instance, a bad request) is an HTTP error like any call's.
  std::shared_ptr<Backends::Stream> reader = *std::move(call);
  stream->AwaitFirst(&req);
  std::shared_ptr<google::protobuf::Message> first = reader->Read();
  stream->AwaitFirst(nullptr);
  if (first == nullptr) {
    grpc::Status status = reader->Finish();
    forget();
    if (absl::Status revoked = stream->Revoked(); !revoked.ok()) return Fail(res, revoked);
    if (!status.ok()) return Fail(res, status);
    res.status = 200;
    res.set_content("", "text/event-stream");
    return;
  }
  res.status = 200;
  res.set_chunked_content_provider(
      "text/event-stream",
      [stream, reader, first](size_t, http::DataSink& sink) mutable {
        {
          absl::MutexLock lock(&stream->write_mu);
          stream->sink = &sink;
        }
        for (std::unique_ptr<google::protobuf::Message> msg; first || (msg = reader->Read());) {
          // The first was read before the answer began; the rest as they come.
          const google::protobuf::Message& m = first ? *first : *msg;
          if (!stream->Write(absl::StrCat("data: ", MessageToJson(m), "\n\n"))) break;
          first.reset();
        }
        grpc::Status status = reader->Finish();
        if (absl::Status revoked = stream->Revoked(); !revoked.ok()) {
          stream->Write(absl::StrCat("event: error\ndata: ", StatusJson(revoked), "\n\n"));
        } else if (!status.ok() && status.error_code() != grpc::StatusCode::CANCELLED) {
          stream->Write(absl::StrCat("event: error\ndata: ", StatusJson(status), "\n\n"));
        }
        {
          absl::MutexLock lock(&stream->write_mu);
          if (stream->sink != nullptr) sink.done();
          stream->sink = nullptr;
        }
        return true;
      },
      [forget](bool) { forget(); });
}

}  // namespace gpuaas::gateway
