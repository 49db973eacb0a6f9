// s3_bench: the storage service's S3 data plane under load, with requests signed as the AWS CLI
// signs them (SigV4, UNSIGNED-PAYLOAD) but sent from C++, so the client is not what is measured.
//
//   s3_bench --endpoint 127.0.0.1:9000 --bucket STORAGE_ID --access-key-id ...
//            --secret-access-key-file F object --size 1Gi [--repeats 3]
//   s3_bench ... objects --count 10000 --size 10Ki [--workers 8]
//
// `object` uploads one object streamed from memory and downloads it (discarding the bytes),
// reporting MB/s each way; `objects` uploads then downloads `count` objects from `workers`
// keep-alive connections, reporting objects/s and per-request latency. Data left behind is
// deleted at the end. JSON report on stdout, progress on stderr.
#include <httplib.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "bench/loadgen/latency_recorder.h"
#include "bench/storage/s3_request_signer.h"
#include "libs/common/quantity.h"

namespace gpuaas::storage::bench {
namespace {

struct Target {
  std::string host;
  int port = 9000;
  std::string bucket;
  S3Credentials credentials;

  std::string HostHeader() const { return absl::StrCat(host, ":", port); }
  std::string Path(const std::string& key) const { return absl::StrCat("/", bucket, "/", key); }
};

std::unique_ptr<httplib::Client> Connect(const Target& t) {
  auto client = std::make_unique<httplib::Client>(t.host, t.port);
  client->set_keep_alive(true);
  client->set_tcp_nodelay(true);  // headers and body go in separate writes
  client->set_read_timeout(300, 0);
  client->set_write_timeout(300, 0);
  return client;
}

// A 1 MiB pattern that is not all zeros (no file system or link compresses it away).
const std::string& Pattern() {
  static const std::string* pattern = [] {
    auto* p = new std::string(1 << 20, '\0');
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (char& c : *p) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      c = static_cast<char>(x);
    }
    return p;
  }();
  return *pattern;
}

bool Put(httplib::Client& client, const Target& t, const std::string& key, int64_t size) {
  const std::string path = t.Path(key);
  auto headers = SignRequest(t.credentials, "PUT", path, t.HostHeader(), absl::Now());
  auto result = client.Put(
      path.c_str(), headers, static_cast<size_t>(size),
      [](size_t offset, size_t length, httplib::DataSink& sink) {
        const std::string& p = Pattern();
        const size_t at = offset % p.size();
        return sink.write(p.data() + at, std::min(length, p.size() - at));
      },
      "application/octet-stream");
  if (!result || result->status != 200) {
    std::cerr << "PUT " << key << ": "
              << (result ? std::to_string(result->status) + " " + result->body
                         : httplib::to_string(result.error()))
              << "\n";
    return false;
  }
  return true;
}

// Returns the bytes received, or -1.
int64_t Get(httplib::Client& client, const Target& t, const std::string& key) {
  const std::string path = t.Path(key);
  auto headers = SignRequest(t.credentials, "GET", path, t.HostHeader(), absl::Now());
  int64_t received = 0;
  auto result = client.Get(path.c_str(), headers, [&](const char*, size_t n) {
    received += static_cast<int64_t>(n);
    return true;
  });
  if (!result || result->status != 200) {
    std::cerr << "GET " << key << ": "
              << (result ? std::to_string(result->status) : httplib::to_string(result.error()))
              << "\n";
    return -1;
  }
  return received;
}

bool Delete(httplib::Client& client, const Target& t, const std::string& key) {
  const std::string path = t.Path(key);
  auto result = client.Delete(
      path.c_str(), SignRequest(t.credentials, "DELETE", path, t.HostHeader(), absl::Now()));
  return result && result->status == 204;
}

double MegabytesPerSecond(int64_t bytes, absl::Duration took) {
  return static_cast<double>(bytes) / 1e6 / absl::ToDoubleSeconds(took);
}

int RunObject(const Target& t, int64_t size, int repeats) {
  auto client = Connect(t);
  nlohmann::json runs = nlohmann::json::array();
  for (int i = 0; i < repeats; ++i) {
    const std::string key = absl::StrCat("s3-bench/object-", i);
    absl::Time start = absl::Now();
    if (!Put(*client, t, key, size)) return 1;
    const absl::Duration up = absl::Now() - start;
    start = absl::Now();
    if (Get(*client, t, key) != size) return 1;
    const absl::Duration down = absl::Now() - start;
    Delete(*client, t, key);
    std::cerr << "object " << size << " bytes: up " << MegabytesPerSecond(size, up)
              << " MB/s, down " << MegabytesPerSecond(size, down) << " MB/s\n";
    runs.push_back({{"up_mb_per_s", MegabytesPerSecond(size, up)},
                    {"down_mb_per_s", MegabytesPerSecond(size, down)}});
  }
  std::cout << nlohmann::json{{"mode", "object"}, {"bytes", size}, {"runs", runs}}.dump(2) << "\n";
  return 0;
}

nlohmann::json Summary(const gpuaas::bench::LatencyRecorder& recorder, int count,
                       absl::Duration took) {
  const gpuaas::bench::LatencySummary s = recorder.Summarize();
  return {{"objects_per_s", count / absl::ToDoubleSeconds(took)},
          {"ok", s.ok},
          {"failed", s.completed - s.ok},
          {"p50_ms", s.p50_ms},
          {"p99_ms", s.p99_ms},
          {"max_ms", s.max_ms}};
}

// Runs `op(client, index)` for every index in [0, count) from `workers` threads.
template <typename Op>
nlohmann::json Phase(const Target& t, int count, int workers, const char* name, Op op) {
  gpuaas::bench::LatencyRecorder recorder;
  std::atomic<int> next{0};
  const absl::Time start = absl::Now();
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) {
    threads.emplace_back([&] {
      auto client = Connect(t);
      for (int i = next++; i < count; i = next++) {
        const absl::Time begin = absl::Now();
        const bool ok = op(*client, i);
        recorder.Record(ok ? grpc::StatusCode::OK : grpc::StatusCode::UNKNOWN, absl::Now() - begin);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  nlohmann::json summary = Summary(recorder, count, absl::Now() - start);
  std::cerr << name << ": " << summary.dump() << "\n";
  return summary;
}

int RunObjects(const Target& t, int count, int64_t size, int workers) {
  auto key = [](int i) { return absl::StrCat("s3-bench/many/", i / 1000, "/", i); };
  nlohmann::json up = Phase(t, count, workers, "put",
                            [&](httplib::Client& c, int i) { return Put(c, t, key(i), size); });
  nlohmann::json down = Phase(t, count, workers, "get",
                              [&](httplib::Client& c, int i) { return Get(c, t, key(i)) == size; });
  Phase(t, count, workers, "delete",
        [&](httplib::Client& c, int i) { return Delete(c, t, key(i)); });
  std::cout << nlohmann::json{{"mode", "objects"},  {"count", count}, {"bytes", size},
                              {"workers", workers}, {"put", up},      {"get", down}}
                   .dump(2)
            << "\n";
  return up["failed"] == 0 && down["failed"] == 0 ? 0 : 1;
}

int Main(int argc, char** argv) {
  CLI::App app("s3_bench: throughput of the storage service's S3 data plane");
  app.require_subcommand(1);
  std::string endpoint = "127.0.0.1:9000", secret_file;
  Target t;
  app.add_option("--endpoint", endpoint, "host:port of the S3 endpoint")->capture_default_str();
  app.add_option("--bucket", t.bucket, "the storage id")->required();
  app.add_option("--access-key-id", t.credentials.access_key_id)->required();
  app.add_option("--secret-access-key-file", secret_file, "file holding the secret key")
      ->required();
  std::string object_size = "1Gi", objects_size = "10Ki";
  int repeats = 3, count = 10000, workers = 8;
  CLI::App* object = app.add_subcommand("object", "one large object up and down");
  object->add_option("--size", object_size)->capture_default_str();
  object->add_option("--repeats", repeats)->capture_default_str();
  CLI::App* objects = app.add_subcommand("objects", "many small objects up and down");
  objects->add_option("--count", count)->capture_default_str();
  objects->add_option("--size", objects_size)->capture_default_str();
  objects->add_option("--workers", workers)->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  const size_t colon = endpoint.rfind(':');
  if (colon == std::string::npos) {
    std::cerr << "error: --endpoint: want host:port\n";
    return 2;
  }
  t.host = endpoint.substr(0, colon);
  t.port = std::stoi(endpoint.substr(colon + 1));
  std::ifstream in(secret_file);
  if (!std::getline(in, t.credentials.secret_access_key)) {
    std::cerr << "error: --secret-access-key-file: cannot read " << secret_file << "\n";
    return 2;
  }
  auto size = ParseBytes("--size", object->parsed() ? object_size : objects_size);
  if (!size.ok()) {
    std::cerr << "error: " << size.status().message() << "\n";
    return 2;
  }
  return object->parsed() ? RunObject(t, *size, repeats) : RunObjects(t, count, *size, workers);
}

}  // namespace
}  // namespace gpuaas::storage::bench

int main(int argc, char** argv) { return gpuaas::storage::bench::Main(argc, argv); }
