// Client channels for gpuaasctl and the load generator: plaintext by default, TLS when a CA is
// given, mutual TLS when a client certificate is given too.
#pragma once

#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/status/statusor.h"
#include "tools/gpuaasctl/config.h"

namespace gpuaas::ctl {

// Does not connect; the first call does. Error: INVALID_ARGUMENT for cert without key (or the
// reverse) or TLS files without a CA, NOT_FOUND for an unreadable file.
absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(const std::string& address,
                                                           const TlsFiles& tls,
                                                           const grpc::ChannelArguments& args = {});

}  // namespace gpuaas::ctl
