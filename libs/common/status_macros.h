// Early-return helpers for absl::Status / absl::StatusOr.
// Our abseil (20220623) lacks ABSL_RETURN_IF_ERROR / ABSL_ASSIGN_OR_RETURN; switch to them
// once Debian ships LTS 20260526 or later.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define GPUAAS_STATUS_CONCAT_INNER_(a, b) a##b
#define GPUAAS_STATUS_CONCAT_(a, b) GPUAAS_STATUS_CONCAT_INNER_(a, b)

// Returns the status of `expr` from the enclosing function when it is not OK.
#define GPUAAS_RETURN_IF_ERROR(expr)                 \
  do {                                               \
    ::absl::Status gpuaas_status_ = (expr);          \
    if (!gpuaas_status_.ok()) return gpuaas_status_; \
  } while (false)

// Evaluates `rexpr` (a StatusOr<T>); returns its status when not OK, otherwise moves the value
// into `lhs`, which may be a declaration: GPUAAS_ASSIGN_OR_RETURN(auto x, F());
#define GPUAAS_ASSIGN_OR_RETURN(lhs, rexpr) \
  GPUAAS_ASSIGN_OR_RETURN_IMPL_(GPUAAS_STATUS_CONCAT_(gpuaas_statusor_, __LINE__), lhs, rexpr)

#define GPUAAS_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                                  \
  if (!statusor.ok()) return std::move(statusor).status();  \
  lhs = *std::move(statusor)
