#include "libs/service/update_mask.h"

#include "absl/strings/str_join.h"
#include "google/protobuf/util/field_mask_util.h"
#include "libs/service/validate.h"

namespace gpuaas::service {
namespace {

using google::protobuf::util::FieldMaskUtil;

// `inner` is `outer` or a field below it.
bool IsWithin(std::string_view inner, std::string_view outer) {
  return inner == outer ||
         (inner.size() > outer.size() && inner.starts_with(outer) && inner[outer.size()] == '.');
}

}  // namespace

absl::StatusOr<UpdateMask> UpdateMask::Parse(const google::protobuf::FieldMask& mask,
                                             std::initializer_list<std::string_view> allowed) {
  std::vector<std::string> paths;
  if (mask.paths_size() == 0) {
    paths.assign(allowed.begin(), allowed.end());
    return UpdateMask(std::move(paths));
  }
  for (const std::string& path : mask.paths()) {
    bool ok = false;
    for (std::string_view a : allowed) {
      ok = ok || IsWithin(path, a);
    }
    if (!ok) {
      std::vector<std::string> names(allowed.begin(), allowed.end());
      return InvalidField("update_mask",
                          "unknown field '" + path + "'; allowed: " + absl::StrJoin(names, ", "));
    }
    paths.push_back(path);
  }
  return UpdateMask(std::move(paths));
}

bool UpdateMask::Touches(std::string_view path) const {
  for (const std::string& p : paths_) {
    if (IsWithin(p, path) || IsWithin(path, p)) {
      return true;
    }
  }
  return false;
}

void UpdateMask::Apply(const google::protobuf::Message& from, google::protobuf::Message& to) const {
  google::protobuf::FieldMask fields;
  for (const std::string& p : paths_) {
    if (FieldMaskUtil::GetFieldDescriptors(from.GetDescriptor(), p, nullptr)) {
      fields.add_paths(p);
    }
  }
  FieldMaskUtil::MergeOptions options;
  // A masked message or list is replaced, not merged into: "quota" sets the whole quota.
  options.set_replace_message_fields(true);
  options.set_replace_repeated_fields(true);
  FieldMaskUtil::MergeMessageTo(from, fields, options, &to);
}

}  // namespace gpuaas::service
