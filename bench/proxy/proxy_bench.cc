// gpuaas-proxy over loopback against a trivial upstream (trivial_upstream.cc), each number
// side by side with the same requests sent straight to the upstream:
//   latency   p50/p99 of keep-alive GETs paced at --rate requests/s for --seconds
//   download  one --download-bytes chunked download, MB/s
//   websocket --ws connections held open at once, then one echo on each, p50/p99
//   idle      the proxy's RSS per idle keep-alive connection (--idle connections)
// Usage: proxy_bench PROXY_PORT UPSTREAM_PORT PROXY_PID [--rate 2000] [--seconds 10]
//        [--download-bytes 1073741824] [--ws 1000] [--idle 2000]
// The proxy must route web-1-8080.gpuaas.localhost to the upstream (bench/proxy/run.sh).
#include <algorithm>
#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/proxy/http_client.h"

namespace {

using Clock = std::chrono::steady_clock;
using gpuaas::proxy_testing::HttpConnection;
constexpr char kHost[] = "web-1-8080.gpuaas.localhost";

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * v.size()))];
}

long RssKib(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

// Open loop at `rate`/s over `threads` keep-alive connections; latencies in ms.
std::vector<double> Latencies(int port, int rate, int seconds, int threads = 16) {
  std::vector<std::vector<double>> per(threads);
  std::vector<std::thread> workers;
  const auto start = Clock::now() + std::chrono::milliseconds(100);
  const double interval_s = static_cast<double>(threads) / rate;
  const int each = rate * seconds / threads;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      HttpConnection c(port);
      for (int i = 0; i < each; ++i) {
        const auto due =
            start + std::chrono::duration_cast<Clock::duration>(
                        std::chrono::duration<double>(interval_s * i + interval_s * t / threads));
        std::this_thread::sleep_until(due);
        if (c.Get(kHost, "/").status != 200) {
          per[t].push_back(1e9);
          continue;
        }
        // From when it was due, so a stalled request also charges the ones queued behind it.
        per[t].push_back(std::chrono::duration<double, std::milli>(Clock::now() - due).count());
      }
    });
  }
  for (auto& w : workers) w.join();
  std::vector<double> all;
  for (auto& v : per) all.insert(all.end(), v.begin(), v.end());
  return all;
}

double DownloadMBps(int port, int64_t bytes) {
  HttpConnection c(port);
  int status = 0;
  const auto t0 = Clock::now();
  const int64_t got = c.Download(kHost, "/stream?n=" + std::to_string(bytes), "", &status);
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  if (got != bytes) return -1;
  return bytes / s / 1e6;
}

// Holds `n` WebSockets open, then echoes once on each; echo latencies in ms.
std::vector<double> WebSocketEchoes(int port, int n) {
  namespace asio = boost::asio;
  namespace ws = boost::beast::websocket;
  asio::io_context io;
  std::vector<std::unique_ptr<ws::stream<asio::ip::tcp::socket>>> conns;
  for (int i = 0; i < n; ++i) {
    auto s = std::make_unique<ws::stream<asio::ip::tcp::socket>>(io);
    boost::beast::error_code ec;
    s->next_layer().connect({asio::ip::make_address("127.0.0.1"), static_cast<uint16_t>(port)}, ec);
    if (!ec) s->handshake(kHost, "/ws", ec);
    if (ec) {
      fprintf(stderr, "websocket %d: %s\n", i, ec.message().c_str());
      break;
    }
    conns.push_back(std::move(s));
  }
  std::vector<double> out;
  for (auto& s : conns) {
    const auto t0 = Clock::now();
    boost::beast::error_code ec;
    s->write(asio::buffer(std::string("ping")), ec);
    boost::beast::flat_buffer b;
    if (!ec) s->read(b, ec);
    out.push_back(ec ? 1e9 : std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  fprintf(stderr, "held %zu websockets\n", conns.size());
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr,
            "usage: %s PROXY_PORT UPSTREAM_PORT PROXY_PID [--rate N] [--seconds N] "
            "[--download-bytes N] [--ws N] [--idle N]\n",
            argv[0]);
    return 2;
  }
  const int proxy = std::stoi(argv[1]);
  const int upstream = std::stoi(argv[2]);
  const int pid = std::stoi(argv[3]);
  int rate = 2000, seconds = 10, ws = 1000, idle = 2000;
  int64_t download = 1LL << 30;
  for (int i = 4; i + 1 < argc; i += 2) {
    const std::string f = argv[i];
    const int64_t v = std::stoll(argv[i + 1]);
    if (f == "--rate") rate = static_cast<int>(v);
    if (f == "--seconds") seconds = static_cast<int>(v);
    if (f == "--download-bytes") download = v;
    if (f == "--ws") ws = static_cast<int>(v);
    if (f == "--idle") idle = static_cast<int>(v);
  }
  {
    const long before = RssKib(pid);
    std::vector<std::unique_ptr<HttpConnection>> conns;
    for (int i = 0; i < idle; ++i) {
      conns.push_back(std::make_unique<HttpConnection>(proxy));
      conns.back()->Get(kHost, "/");  // a served request, then idle keep-alive
    }
    std::this_thread::sleep_for(std::chrono::seconds(1));
    const long after = RssKib(pid);
    printf(
        "idle    proxy RSS %ld KiB -> %ld KiB with %d idle keep-alive connections: %.1f KiB "
        "each\n",
        before, after, idle, static_cast<double>(after - before) / idle);
  }
  for (auto [name, port] : {std::pair{"direct", upstream}, std::pair{"proxy", proxy}}) {
    std::vector<double> l = Latencies(port, rate, seconds);
    printf("latency %-6s %d req/s x %d s: p50 %.3f ms  p99 %.3f ms  (n=%zu)\n", name, rate, seconds,
           Percentile(l, 0.5), Percentile(l, 0.99), l.size());
  }
  for (auto [name, port] : {std::pair{"direct", upstream}, std::pair{"proxy", proxy}}) {
    printf("download %-6s %lld bytes: %.0f MB/s\n", name, static_cast<long long>(download),
           DownloadMBps(port, download));
  }
  for (auto [name, port] : {std::pair{"direct", upstream}, std::pair{"proxy", proxy}}) {
    std::vector<double> e = WebSocketEchoes(port, ws);
    printf("websocket %-6s %d held: echo p50 %.3f ms  p99 %.3f ms\n", name, ws, Percentile(e, 0.5),
           Percentile(e, 0.99));
  }
  return 0;
}
