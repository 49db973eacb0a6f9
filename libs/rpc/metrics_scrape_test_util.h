// Test-only: scrape a /metrics endpoint over real HTTP and read the Prometheus text format
// back into samples, so tests compare values and label sets rather than the serializer's
// label order and number formatting.
#pragma once

#include <httplib.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace gpuaas::rpc::test {

using MetricLabels = std::map<std::string, std::string>;

// GET http://127.0.0.1:port/metrics. UNAVAILABLE when the request fails or is not a 200.
inline absl::StatusOr<std::string> ScrapeMetrics(int port) {
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(10);
  client.set_read_timeout(10);
  httplib::Result res = client.Get("/metrics");
  if (!res) {
    return absl::UnavailableError(absl::StrCat("scrape failed: ", httplib::to_string(res.error())));
  }
  if (res->status != 200) {
    return absl::UnavailableError(absl::StrCat("scrape answered HTTP ", res->status));
  }
  return res->body;
}

class Exposition {
 public:
  struct Sample {
    std::string name;
    MetricLabels labels;
    double value = 0;
  };

  // Parses "name{a="x",b="y"} value" lines and "# TYPE name type" comments.
  // INVALID_ARGUMENT on a line that does not follow the format.
  static absl::StatusOr<Exposition> Parse(absl::string_view text) {
    Exposition out;
    for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
      if (absl::ConsumePrefix(&line, "# TYPE ")) {
        std::vector<std::string> parts = absl::StrSplit(line, ' ');
        if (parts.size() == 2) {
          out.types_[parts[0]] = parts[1];
        }
        continue;
      }
      if (absl::StartsWith(line, "#")) {
        continue;
      }
      std::optional<Sample> sample = ParseSample(line);
      if (!sample.has_value()) {
        return absl::InvalidArgumentError(absl::StrCat("bad sample line: ", line));
      }
      out.samples_.push_back(*std::move(sample));
    }
    return out;
  }

  // The value of the sample with exactly this name and label set.
  std::optional<double> Value(absl::string_view name, const MetricLabels& labels = {}) const {
    for (const Sample& s : samples_) {
      if (s.name == name && s.labels == labels) {
        return s.value;
      }
    }
    return std::nullopt;
  }

  // The count of histogram bucket `le` (compared as a number, whatever its spelling).
  std::optional<double> Bucket(absl::string_view histogram, const MetricLabels& labels,
                               double le) const {
    std::string name = absl::StrCat(histogram, "_bucket");
    for (const Sample& s : samples_) {
      MetricLabels rest = s.labels;
      auto it = rest.find("le");
      double bound = 0;
      if (s.name != name || it == rest.end() || !absl::SimpleAtod(it->second, &bound) ||
          bound != le) {
        continue;
      }
      rest.erase(it);
      if (rest == labels) {
        return s.value;
      }
    }
    return std::nullopt;
  }

  // Every sample called `name`, whatever its labels.
  std::vector<Sample> All(absl::string_view name) const {
    std::vector<Sample> out;
    for (const Sample& s : samples_) {
      if (s.name == name) {
        out.push_back(s);
      }
    }
    return out;
  }

  // "counter", "gauge", "histogram" ... from the TYPE comment; empty when there is none.
  std::string Type(const std::string& name) const {
    auto it = types_.find(name);
    return it == types_.end() ? "" : it->second;
  }

 private:
  static std::optional<Sample> ParseSample(absl::string_view line) {
    Sample sample;
    size_t end = line.find_first_of("{ ");
    if (end == absl::string_view::npos || end == 0) {
      return std::nullopt;
    }
    sample.name = std::string(line.substr(0, end));
    line.remove_prefix(end);
    if (line.front() == '{') {
      line.remove_prefix(1);
      while (!line.empty() && line.front() != '}') {
        size_t eq = line.find("=\"");
        if (eq == absl::string_view::npos) {
          return std::nullopt;
        }
        std::string label(line.substr(0, eq));
        line.remove_prefix(eq + 2);
        std::string value;
        while (!line.empty() && line.front() != '"') {
          if (line.front() == '\\' && line.size() > 1) {
            line.remove_prefix(1);
            value.push_back(line.front() == 'n' ? '\n' : line.front());
          } else {
            value.push_back(line.front());
          }
          line.remove_prefix(1);
        }
        if (line.empty()) {
          return std::nullopt;
        }
        line.remove_prefix(1);  // closing quote
        if (!line.empty() && line.front() == ',') {
          line.remove_prefix(1);
        }
        sample.labels[label] = value;
      }
      if (line.empty()) {
        return std::nullopt;
      }
      line.remove_prefix(1);  // '}'
    }
    std::vector<absl::string_view> rest = absl::StrSplit(line, ' ', absl::SkipEmpty());
    // A value, optionally followed by a timestamp.
    if (rest.empty() || rest.size() > 2 || !absl::SimpleAtod(rest[0], &sample.value)) {
      return std::nullopt;
    }
    return sample;
  }

  std::vector<Sample> samples_;
  std::map<std::string, std::string> types_;
};

// ScrapeMetrics + Parse, for tests that ASSERT on the result.
inline absl::StatusOr<Exposition> ScrapeExposition(int port) {
  absl::StatusOr<std::string> body = ScrapeMetrics(port);
  if (!body.ok()) {
    return body.status();
  }
  return Exposition::Parse(*body);
}

}  // namespace gpuaas::rpc::test
