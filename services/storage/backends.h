// The backends this server runs, by the backend class storage specs name ("local"). Built once
// in the wiring; read-only afterwards, so thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "services/storage/backend.h"

namespace gpuaas::storage {

class Backends final {
 public:
  Backends() = default;
  // `backends` are not owned and must outlive this.
  explicit Backends(std::vector<Backend*> backends) : backends_(std::move(backends)) {}

  // The backend of `backend_class`. Error: FAILED_PRECONDITION naming the classes there are.
  absl::StatusOr<Backend*> Find(std::string_view backend_class) const {
    for (Backend* b : backends_) {
      if (b->backend_class() == backend_class) return b;
    }
    std::string classes;
    for (Backend* b : backends_) {
      classes += (classes.empty() ? "" : ", ") + std::string(b->backend_class());
    }
    return absl::FailedPreconditionError(
        "backend class \"" + std::string(backend_class) +
        "\" is not served here (this server has: " + (classes.empty() ? "none" : classes) + ")");
  }

 private:
  std::vector<Backend*> backends_;
};

}  // namespace gpuaas::storage
