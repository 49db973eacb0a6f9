// Update methods (AIP-134): which fields an update_mask names, checked against the fields a
// method lets callers change, and copying exactly those fields onto the stored resource.
//
//   GPUAAS_ASSIGN_OR_RETURN(UpdateMask mask, UpdateMask::Parse(req.update_mask(), {"display_name",
//   "quota"})); if (mask.Touches("quota")) ...            // "quota" or any "quota.<field>"
//   mask.Apply(req.tenant(), stored);          // copies the named fields
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "google/protobuf/field_mask.pb.h"
#include "google/protobuf/message.h"

namespace gpuaas::service {

class UpdateMask final {
 public:
  // `allowed` lists the updatable paths; a path under an allowed message field is allowed too
  // ("quota.max_gpus" under "quota"). An empty mask means every allowed path (AIP-134).
  // Error: INVALID_ARGUMENT "update_mask: unknown field 'x'; allowed: a, b".
  static absl::StatusOr<UpdateMask> Parse(const google::protobuf::FieldMask& mask,
                                          std::initializer_list<std::string_view> allowed);

  // The mask names `path`, a field above it, or a field below it.
  bool Touches(std::string_view path) const;

  // Copies the masked fields of `from` onto `to` (messages of one type); masked paths that are
  // not fields of that type (request-level ones such as a password) are skipped.
  void Apply(const google::protobuf::Message& from, google::protobuf::Message& to) const;

  const std::vector<std::string>& paths() const { return paths_; }

 private:
  explicit UpdateMask(std::vector<std::string> paths) : paths_(std::move(paths)) {}

  std::vector<std::string> paths_;
};

}  // namespace gpuaas::service
