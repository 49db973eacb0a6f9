// A workload's directory under the runtime's root, by the id the control plane names it with.
#pragma once

#include <string>
#include <string_view>

namespace gpuaas::agent {

// An id that names a directory right under the root: no "/", no "..", not ".".
inline bool PlainWorkloadId(std::string_view id) {
  return !id.empty() && id.find('/') == std::string_view::npos &&
         id.find("..") == std::string_view::npos && id != ".";
}

// "<instance_id>.<run>" (Workload.workload_id): every run of an instance shares its caps.
inline std::string_view InstanceOfWorkload(std::string_view workload_id) {
  return workload_id.substr(0, workload_id.rfind('.'));
}

}  // namespace gpuaas::agent
