// One client connection: read a request head, decide (access_decision.h), answer or forward,
// and again while both sides keep the connection alive. A template over the client stream so
// plain TCP and TLS share every line. Runs on the connection's event loop (one thread).
#pragma once

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "libs/common/logging.h"
#include "services/proxy/access_decision.h"
#include "services/proxy/grant_rechecks.h"
#include "services/proxy/internal/relay.h"
#include "services/proxy/open_connection_checks.h"
#include "services/proxy/proxy_server.h"
#include "services/proxy/request_checks.h"
#include "services/proxy/upstream_headers.h"

namespace gpuaas::proxy::internal {

using tcp = asio::ip::tcp;

// Not body_limit(boost::none): Beast 1.74 compares the length against the empty optional and
// refuses every sized body ("body limit exceeded").
inline constexpr std::uint64_t kNoBodyLimit = std::numeric_limits<std::uint64_t>::max();

// Beast has a string_view of its own (boost::string_view in 1.74).
inline std::string_view Sv(beast::string_view s) { return {s.data(), s.size()}; }

// An open connection is re-checked no more often than this, even when its cookie's last
// confirmation is already stale.
inline constexpr absl::Duration kLeastRecheckWait = absl::Milliseconds(100);

// What every session shares, owned by the server.
struct SessionShared {
  const ProxyOptions& options;
  const ProxyDeps& deps;
  asio::thread_pool& blocking;  // for RPCs, off the I/O threads
  GrantRechecks& rechecks;
  bool tls = false;
};

// The connection to the workload, kept while both sides keep it alive.
struct Upstream {
  std::optional<TcpStream> stream;
  beast::flat_buffer buffer;
  std::string host;
  int32_t port = 0;
};

template <class ClientStream>
class Session final {
 public:
  Session(ClientStream& client, SessionShared& shared)
      : client_(client),
        shared_(shared),
        client_deadline_(client.get_executor()),
        upstream_deadline_(client.get_executor()) {}

  Task<void> Run() {
    beast::error_code ec;
    const auto remote = beast::get_lowest_layer(client_).socket().remote_endpoint(ec);
    client_ip_ = ec ? "" : remote.address().to_string();
    for (;;) {
      http::request_parser<http::empty_body> head;
      head.header_limit(static_cast<uint32_t>(shared_.options.header_limit));
      head.body_limit(kNoBodyLimit);
      ec = co_await ReadHeader(client_, buffer_, head, client_deadline_,
                               shared_.options.header_timeout);
      if (ec == http::error::header_limit) {
        co_await Answer(431, "request header too large\n", false, 11);
        co_return;
      }
      if (ec) {
        // EOF between requests, a timeout (idle or slowloris), a malformed head: close.
        if (ec != http::error::end_of_stream && ec != beast::error::timeout &&
            ec != asio::error::eof) {
          co_await Answer(400, "bad request\n", false, 11);
        }
        co_return;
      }
      const bool keep = co_await Handle(head);
      if (!keep) {
        co_return;
      }
    }
  }

 private:
  // One request; true when the connection may serve another.
  Task<bool> Handle(http::request_parser<http::empty_body>& head) {
    auto& req = head.get();
    // A body we do not read would be taken for the next request: close after answering.
    const bool has_body = head.chunked() || head.content_length().value_or(0) > 0;
    const bool keep_if_answered = req.keep_alive() && !has_body;
    std::optional<std::string> transfer_encoding;
    if (req.count(http::field::transfer_encoding) > 0) {
      transfer_encoding = JoinedField(req, "Transfer-Encoding", ",");
    }
    if (!HasSafeFraming(transfer_encoding, req.count(http::field::content_length) > 0,
                        req.version())) {
      // Where the body ends is ambiguous: never forward it, never read on (smuggling).
      co_return co_await Answer(400, "bad request: Transfer-Encoding\n", false, req.version());
    }
    const std::string cookies = JoinedField(req, "Cookie", "; ");
    auto host_it = req.find(http::field::host);
    const RequestHead view{.method = Sv(req.method_string()),
                           .target = Sv(req.target()),
                           .host_fields = static_cast<int>(req.count(http::field::host)),
                           .host = host_it == req.end() ? std::string_view() : Sv(host_it->value()),
                           .authorization = Sv(req[http::field::authorization]),
                           .cookie = cookies,
                           .origin = Sv(req[http::field::origin]),
                           .fetch_site = Sv(req["Sec-Fetch-Site"]),
                           .upgrade = req.count(http::field::upgrade) > 0};
    Decision d = Decide(view, {.routes = shared_.deps.routes,
                               .authenticator = shared_.deps.authenticator,
                               .cookies = shared_.deps.cookies,
                               .access_domain = shared_.options.access_domain,
                               .tls = shared_.tls,
                               .now = shared_.deps.clock.Now()});
    switch (d.action) {
      case Decision::Action::kRespond:
        co_return co_await Answer(d.status, d.body, keep_if_answered, req.version(),
                                  d.status == 401);
      case Decision::Action::kRedeem:
        co_return co_await Redeem(d, keep_if_answered, req.version());
      case Decision::Action::kForward:
        break;
    }
    if (d.cookie_grant) {
      if (absl::Status s = co_await Recheck(d); !s.ok()) {
        co_return co_await AnswerFailedCheck(s, keep_if_answered, req.version());
      }
    }
    if (shared_.deps.activity != nullptr) {
      shared_.deps.activity->Note(d.host.instance_id);
    }
    PrepareUpstreamHeaders(
        req, {.client_ip = client_ip_, .tls = shared_.tls, .host = view.host, .route = d.route});
    const bool keep = co_await Forward(head, d);
    co_await StopGuard();
    co_return keep;
  }

  Task<bool> Answer(unsigned status, std::string_view body, bool keep, unsigned version,
                    bool challenge = false,
                    std::vector<std::pair<std::string, std::string>> extra = {}) {
    http::response<http::string_body> res{static_cast<http::status>(status), version};
    res.set(http::field::server, "gpuaas-proxy");
    res.set(http::field::content_type, "text/plain; charset=utf-8");
    res.set(http::field::cache_control, "no-store");
    if (challenge) {
      res.set(http::field::www_authenticate, "Bearer realm=\"gpuaas\"");
    }
    for (auto& [name, value] : extra) {
      res.set(name, value);
    }
    res.body() = std::string(body);
    res.keep_alive(keep);
    res.prepare_payload();
    shared_.deps.metrics.CountResponse(status);
    beast::error_code ec;
    beast::get_lowest_layer(client_).expires_after(Chrono(shared_.options.body_timeout));
    co_await http::async_write(client_, res, asio::redirect_error(kAwait, ec));
    co_return !ec && keep;
  }

  // /.gpuaas/access?code=C: the redemption runs on the blocking pool; a grant for this very
  // host becomes the cookie, anything else the same 404 as an unknown instance.
  Task<bool> Redeem(const Decision& d, bool keep, unsigned version) {
    CodeRedeemer& redeemer = shared_.deps.redeemer;
    const std::string code = d.code;
    const AccessHost host = d.host;
    absl::StatusOr<authz::WorkloadGrant> grant = co_await asio::co_spawn(
        shared_.blocking,
        [&]() -> asio::awaitable<absl::StatusOr<authz::WorkloadGrant>> {
          co_return redeemer.Redeem(code, host.instance_id, host.port);
        },
        kAwait);
    if (grant.ok()) {
      if (absl::Status s = authz::AuthorizeWorkloadAccess(*grant, host.instance_id, host.port,
                                                          d.route.tenant_id);
          !s.ok()) {
        grant = s;
      }
    }
    if (!grant.ok()) {
      if (grant.status().code() == absl::StatusCode::kUnavailable ||
          grant.status().code() == absl::StatusCode::kDeadlineExceeded) {
        Logger("proxy")->warn("redeeming an access code: {}", grant.status().ToString());
        co_return co_await Answer(503, "try again\n", keep, version);
      }
      co_return co_await Answer(404, "not found\n", keep, version);
    }
    const absl::Time now = shared_.deps.clock.Now();
    absl::StatusOr<std::string> value =
        shared_.deps.cookies.Sign(*grant, now + shared_.options.cookie_ttl);
    if (!value.ok()) {
      co_return co_await Answer(404, "not found\n", keep, version);
    }
    // The redemption just confirmed the grant.
    shared_.rechecks.Remember(*value, absl::OkStatus(), now);
    // Host-only (no Domain), so the browser sends it to this instance port and nowhere else.
    std::string cookie = std::string(kAccessCookieName) + "=" + *value + "; Path=/; Max-Age=" +
                         std::to_string(absl::ToInt64Seconds(shared_.options.cookie_ttl)) +
                         "; HttpOnly; SameSite=Lax" + (shared_.tls ? "; Secure" : "");
    if (shared_.deps.activity != nullptr) {
      shared_.deps.activity->Note(host.instance_id);
    }
    // Built before the co_await: GCC 12 miscompiles braced lists in a coroutine's call.
    std::vector<std::pair<std::string, std::string>> extra;
    extra.emplace_back("Set-Cookie", std::move(cookie));
    extra.emplace_back("Location", d.route.base_url);
    extra.emplace_back("Referrer-Policy", "no-referrer");
    co_return co_await Answer(302, "", keep, version, false, std::move(extra));
  }

  // The cookie's grant, as the instance service last confirmed it within --grant-recheck;
  // asks again (on the blocking pool) when that was longer ago.
  Task<absl::Status> Recheck(const Decision& d) {
    const absl::Time now = shared_.deps.clock.Now();
    if (std::optional<absl::Status> fresh = shared_.rechecks.Fresh(d.cookie, now)) {
      co_return *fresh;
    }
    GrantChecker& grants = shared_.deps.grants;
    const authz::WorkloadGrant grant = *d.cookie_grant;
    absl::Status answer = co_await asio::co_spawn(
        shared_.blocking,
        [&]() -> asio::awaitable<absl::Status> { co_return grants.CheckGrant(grant); }, kAwait);
    shared_.rechecks.Remember(d.cookie, answer, now);
    co_return answer;
  }

  // A grant that no longer holds answers as if there had been no access (the same bodies as
  // access_decision.h's); an outage of the instance service answers 503.
  Task<bool> AnswerFailedCheck(const absl::Status& s, bool keep, unsigned version) {
    switch (s.code()) {
      case absl::StatusCode::kPermissionDenied:
        co_return co_await Answer(403, "forbidden\n", keep, version);
      case absl::StatusCode::kUnavailable:
      case absl::StatusCode::kDeadlineExceeded:
        Logger("proxy")->warn("re-checking an access cookie: {}", s.ToString());
        co_return co_await Answer(503, "try again\n", keep, version);
      default:
        co_return co_await Answer(404, "not found\n", keep, version);
    }
  }

  using Timer = asio::basic_waitable_timer<std::chrono::steady_clock,
                                           asio::wait_traits<std::chrono::steady_clock>, Executor>;

  // The watch over a long exchange's access (KeepChecking), while it runs.
  struct Guard {
    explicit Guard(Executor executor)
        : wake(executor), finished(executor, std::chrono::steady_clock::time_point::max()) {}
    Timer wake;
    Timer finished;  // cancelled when KeepChecking has returned
    bool stop = false;
    bool running = true;
  };

  // From here until StopGuard, the exchange of `d` (which must outlive it) is watched: a
  // tunnel or a body that streams for longer than the re-check bound ends when its access
  // stops holding. Only long exchanges pay for it: a small response that came whole with its
  // head never starts one.
  void StartGuard(const Decision& d) {
    if (guard_) {
      return;
    }
    guard_ = std::make_unique<Guard>(client_.get_executor());
    Guard* guard = guard_.get();
    asio::co_spawn(client_.get_executor(), KeepChecking(d, *guard), [guard](std::exception_ptr) {
      guard->running = false;
      guard->finished.cancel();
    });
  }

  Task<void> StopGuard() {
    if (!guard_) {
      co_return;
    }
    guard_->stop = true;
    guard_->wake.cancel();
    if (guard_->running) {
      beast::error_code ignored;
      co_await guard_->finished.async_wait(asio::redirect_error(kAwait, ignored));
    }
    guard_.reset();
  }

  // Asks again, on the re-check bound, whether `d` would still be forwarded (the route, a
  // bearer token, a cookie's grant: open_connection_checks.h); when not, or when the instance
  // service cannot say (as a new request would answer 503), closes both sides, which ends the
  // relay or tunnel. So an open connection outlives its access by at most --grant-recheck plus
  // one re-check RPC.
  Task<void> KeepChecking(const Decision& d, Guard& guard) {
    for (;;) {
      const absl::Duration wait =
          std::max(UntilNextCheck(d, shared_.rechecks, shared_.options.grant_recheck,
                                  shared_.deps.clock.Now()),
                   std::min(shared_.options.grant_recheck, kLeastRecheckWait));
      beast::error_code ec;
      guard.wake.expires_after(Chrono(wait));
      co_await guard.wake.async_wait(asio::redirect_error(kAwait, ec));
      if (guard.stop) {
        co_return;
      }
      absl::Status holds = StillRoutes(d, shared_.deps.routes, shared_.deps.authenticator);
      if (holds.ok() && d.cookie_grant) {
        holds = co_await Recheck(d);
      }
      if (guard.stop) {
        co_return;
      }
      if (!holds.ok()) {
        Logger("proxy")->info("{}: ending an open connection to port {}: {}", d.host.instance_id,
                              d.host.port, std::string(holds.message()));
        shared_.deps.metrics.CountRevokedConnection();
        beast::error_code ignored;
        beast::get_lowest_layer(client_).socket().close(ignored);
        if (upstream_.stream) {
          upstream_.stream->socket().close(ignored);
        }
        co_return;
      }
    }
  }

  Task<beast::error_code> Connect(const PortRoute& route) {
    beast::error_code ec;
    if (upstream_.stream && upstream_.host == route.host && upstream_.port == route.host_port &&
        upstream_.stream->socket().is_open()) {
      co_return ec;
    }
    upstream_.stream.reset();
    upstream_.buffer.clear();
    auto executor = co_await asio::this_coro::executor;
    tcp::resolver resolver(executor);
    auto endpoints = co_await resolver.async_resolve(route.host, std::to_string(route.host_port),
                                                     asio::redirect_error(kAwait, ec));
    if (ec) {
      co_return ec;
    }
    upstream_.stream.emplace(executor);
    upstream_.stream->expires_after(Chrono(shared_.options.connect_timeout));
    co_await upstream_.stream->async_connect(endpoints, asio::redirect_error(kAwait, ec));
    if (ec) {
      upstream_.stream.reset();
      co_return ec;
    }
    upstream_.stream->socket().set_option(tcp::no_delay(true), ec);
    upstream_.host = route.host;
    upstream_.port = route.host_port;
    co_return beast::error_code{};
  }

  // Forwards the request (body streamed), then the response (body streamed); a 101 turns the
  // connection into a tunnel. True when both sides keep the connection alive.
  Task<bool> Forward(http::request_parser<http::empty_body>& head, const Decision& d) {
    const unsigned version = head.get().version();
    const bool is_head = head.get().method() == http::verb::head;
    const bool client_keep = head.get().keep_alive();
    const bool long_request = head.chunked() || head.content_length().value_or(0) > kRelayChunk;
    beast::error_code ec = co_await Connect(d.route);
    if (ec) {
      Logger("proxy")->debug("{}: connecting to the workload: {}", d.host.instance_id,
                             ec.message());
      shared_.deps.metrics.CountUpstreamError();
      co_return co_await Answer(502, "the workload cannot be reached\n", false, version);
    }
    if (long_request) {
      StartGuard(d);
    }
    http::request_parser<http::buffer_body> request{std::move(head)};
    http::request_serializer<http::buffer_body> request_out{request.get()};
    ec = co_await RelayBody(client_, buffer_, request, *upstream_.stream, request_out, relay_chunk_,
                            shared_.options.body_timeout);
    if (ec) {
      Logger("proxy")->debug("{}: relaying the request: {}", d.host.instance_id, ec.message());
      // Either side failed mid-request: nothing reached the client yet, but its body may be
      // half read, so this connection is done.
      upstream_.stream.reset();
      shared_.deps.metrics.CountUpstreamError();
      co_await Answer(502, "the workload cannot be reached\n", false, version);
      co_return false;
    }

    http::response_parser<http::buffer_body> response;
    response.header_limit(static_cast<uint32_t>(shared_.options.header_limit));
    response.body_limit(kNoBodyLimit);
    response.skip(is_head);
    ec = co_await ReadHeader(*upstream_.stream, upstream_.buffer, response, upstream_deadline_,
                             shared_.options.upstream_timeout);
    if (ec) {
      Logger("proxy")->debug("{}: the workload's response head: {}", d.host.instance_id,
                             ec.message());
      upstream_.stream.reset();
      shared_.deps.metrics.CountUpstreamError();
      co_await Answer(502, "the workload did not answer\n", false, version);
      co_return false;
    }
    shared_.deps.metrics.CountResponse(response.get().result_int());
    const bool upgraded = response.get().result() == http::status::switching_protocols;
    if (upgraded || !CameWhole(response, is_head)) {
      StartGuard(d);
    }
    http::response_serializer<http::buffer_body> response_out{response.get()};
    if (upgraded) {
      response.get().body().data = nullptr;
      response.get().body().size = 0;
      response.get().body().more = false;
      beast::get_lowest_layer(client_).expires_after(Chrono(shared_.options.body_timeout));
      co_await http::async_write_header(client_, response_out, asio::redirect_error(kAwait, ec));
      if (!ec) {
        shared_.deps.metrics.tunnels().Increment();
        co_await Tunnel(client_, buffer_, *upstream_.stream, upstream_.buffer);
        shared_.deps.metrics.tunnels().Decrement();
      }
      upstream_.stream.reset();
      co_return false;
    }
    // The client's keep-alive does not depend on the workload's (python's http.server answers
    // HTTP/1.0 and closes): a body delimited only by the workload closing goes out chunked to
    // an HTTP/1.1 client, so its connection survives.
    auto& res = response.get();
    const bool upstream_keep = res.keep_alive();
    const unsigned code = res.result_int();
    const bool delimited = res.has_content_length() || res.chunked() || is_head ||
                           code / 100 == 1 || code == 204 || code == 304;
    bool keep = client_keep;
    if (!delimited) {
      if (version >= 11) {
        res.chunked(true);
      } else {
        keep = false;
      }
    }
    res.version(version >= 11 ? 11 : 10);
    res.keep_alive(keep);
    ec = co_await RelayBody(*upstream_.stream, upstream_.buffer, response, client_, response_out,
                            relay_chunk_, shared_.options.upstream_timeout);
    if (ec) {
      Logger("proxy")->debug("{}: relaying the response: {}", d.host.instance_id, ec.message());
      // The workload broke off (or the client left): end the client's response by closing.
      upstream_.stream.reset();
      shared_.deps.metrics.CountUpstreamError();
      co_return false;
    }
    if (!upstream_keep) {
      upstream_.stream.reset();
    }
    co_return keep;
  }

  // Whether the response's body is already in the upstream buffer (or it has none).
  bool CameWhole(const http::response_parser<http::buffer_body>& response, bool is_head) const {
    const unsigned code = response.get().result_int();
    if (is_head || code / 100 == 1 || code == 204 || code == 304) {
      return true;
    }
    const boost::optional<std::uint64_t> length = response.content_length();
    return length && upstream_.buffer.size() >= *length;
  }

  ClientStream& client_;
  SessionShared& shared_;
  beast::flat_buffer buffer_;
  Upstream upstream_;
  RelayChunk relay_chunk_;
  ReadDeadline client_deadline_;
  ReadDeadline upstream_deadline_;
  std::string client_ip_;
  std::unique_ptr<Guard> guard_;
};

}  // namespace gpuaas::proxy::internal
