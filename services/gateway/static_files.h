// Files compiled into the gateway (the console, the OpenAPI document), so a gateway binary
// serves the console that matches its API, with nothing to install beside it.
#pragma once

#include <string_view>

namespace gpuaas::gateway {

struct StaticFile {
  std::string_view path;  // "/index.html", "/openapi.json"
  std::string_view content_type;
  std::string_view content;
};

// The file served at `path` ("/" is "/index.html"), or null.
const StaticFile* FindStaticFile(std::string_view path);

}  // namespace gpuaas::gateway
