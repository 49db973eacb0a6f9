// The load generator's result, as text for people and JSON for scripts and RESULTS.md tables.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "bench/loadgen/latency_recorder.h"
#include "bench/loadgen/open_loop.h"

namespace gpuaas::bench {

struct Report {
  std::string method;
  std::string addr;
  OpenLoopOptions options;
  int connections = 1;
  OpenLoopResult run;
  LatencySummary latency;

  // Successful completions per second of the measured window.
  double AchievedRate() const;
};

std::string ReportText(const Report& r);
nlohmann::json ReportJson(const Report& r);

}  // namespace gpuaas::bench
