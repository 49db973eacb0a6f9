// Parsing the agent's flag values that are more than a string: labels (durations:
// service::ParseDurationFlag). Kept out
// of main.cc so the rules are tested.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace gpuaas::agent {

// The agent's version, registered with its node.
inline constexpr char kAgentVersion[] = "0.1.0";

// --labels "k=v,k2=v2": keys of [A-Za-z0-9._/-], 1 to 63 characters, unique; values up to 256
// bytes without ','. Empty text is no labels. Error: INVALID_ARGUMENT naming --labels.
absl::StatusOr<std::map<std::string, std::string>> ParseLabels(std::string_view text);

// "host:port", with an IPv6 literal in brackets ("[::1]:17061").
std::string JoinHostPort(std::string_view host, int port);

}  // namespace gpuaas::agent
