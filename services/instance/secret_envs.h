// Secret environment values are write-only (issue 32): an Env marked `secret` keeps its value
// in the instance's stored template and in the Workload the node receives, and loses it in
// every answer to a caller of InstanceService or ImageService, whoever the caller is.
#pragma once

#include <google/protobuf/message.h>

namespace gpuaas::instance {

// Empties the value of every secret gpuaas.instance.v1.Env anywhere inside `m` (at any depth,
// in any field), so an answer type that gains a template later is covered without a change
// here. Never blocks.
void HideSecretEnvs(google::protobuf::Message& m);

}  // namespace gpuaas::instance
