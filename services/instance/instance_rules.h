// What a valid instance, template and image are, and how an image fills a template's gaps.
// Pure: every error is INVALID_ARGUMENT with the field's path first ("template.ports[1].port:
// ..."), so a client can point at the field.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "gpuaas/instance/v1/instance.pb.h"

namespace gpuaas::instance {

namespace pb = ::gpuaas::instance::v1;

// [a-z0-9-], 1..63, a letter first, no '-' last: a DNS label, since it names access URLs.
absl::Status ValidateInstanceId(std::string_view field, std::string_view id);

// Everything of a CreateInstanceRequest that needs no lookup (its template after the image's
// gaps were filled: `effective`).
// runs_oci_image: the instance runs an OCI image, whose own entrypoint and cmd serve when the
// template has no cmd.
absl::Status ValidateCreate(const pb::CreateInstanceRequest& req, const pb::Template& effective,
                            bool runs_oci_image = false);

// A template on its own, at `field` ("template", "image.defaults"); `need_cmd` for an
// instance's final template.
absl::Status ValidateTemplate(std::string_view field, const pb::Template& t, bool need_cmd);

absl::Status ValidateImage(const pb::Image& image);

// The template an instance runs: `requested` with its empty parts taken from `image` (cmd from
// image.command; ports and volumes when it has none; the image's envs unless it names the same;
// probe_timeout).
pb::Template ApplyImage(const pb::Image& image, const pb::Template& requested);

// "name:version" → {name, version}; "name" → {name, ""}.
std::pair<std::string, std::string> SplitImageRef(std::string_view ref);

}  // namespace gpuaas::instance
