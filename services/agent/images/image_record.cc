#include "services/agent/images/image_record.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "libs/common/files.h"
#include "libs/common/unique_fd.h"
#include "nlohmann/json.hpp"
#include "services/agent/images/bounded_json.h"

namespace gpuaas::agent {
namespace {

std::vector<std::string> Strings(const nlohmann::json& value) {
  std::vector<std::string> out;
  if (value.is_array()) {
    for (const auto& item : value) {
      out.push_back(item.get<std::string>());
    }
  }
  return out;
}

}  // namespace

int64_t ImageRecord::unpacked_bytes() const {
  int64_t total = 0;
  for (const LayerRecord& layer : layers) {
    total += layer.unpacked_bytes;
  }
  return total;
}

absl::StatusOr<ImageConfig> ParseImageConfig(const std::string& config_json) {
  absl::StatusOr<nlohmann::json> blob =
      ParseBoundedJson(config_json, "image config", kMaxConfigBytes);
  if (!blob.ok()) {
    return blob.status();
  }
  try {
    const nlohmann::json config = blob->value("config", nlohmann::json::object());
    ImageConfig out;
    out.env = Strings(config.value("Env", nlohmann::json()));
    out.entrypoint = Strings(config.value("Entrypoint", nlohmann::json()));
    out.cmd = Strings(config.value("Cmd", nlohmann::json()));
    out.working_dir = config.value("WorkingDir", "");
    out.user = config.value("User", "");
    const nlohmann::json ports = config.value("ExposedPorts", nlohmann::json::object());
    if (ports.is_object()) {
      for (const auto& [spec, unused] : ports.items()) {
        absl::string_view port = spec;
        int number = 0;
        // "8080/tcp" or "8080" (tcp by default); udp ports are not served.
        if ((absl::ConsumeSuffix(&port, "/tcp") || port.find('/') == absl::string_view::npos) &&
            absl::SimpleAtoi(port, &number) && number > 0 && number < 65536) {
          out.exposed_ports.push_back(number);
        }
      }
    }
    return out;
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("image config: ", e.what()));
  }
}

absl::Status WriteImageRecord(const std::string& path, const ImageRecord& record) {
  nlohmann::json json;
  json["reference"] = record.reference;
  json["layers"] = nlohmann::json::array();
  for (const LayerRecord& layer : record.layers) {
    json["layers"].push_back({{"digest", "sha256:" + layer.hex},
                              {"blob_bytes", layer.blob_bytes},
                              {"unpacked_bytes", layer.unpacked_bytes}});
  }
  json["other_blobs"] = nlohmann::json::array();
  for (const std::string& hex : record.other_blobs) {
    json["other_blobs"].push_back("sha256:" + hex);
  }
  json["config"] = record.config_json;
  json["last_used_unix_micros"] = record.last_used_unix_micros;
  const std::string text = json.dump();
  const std::string temp = path + ".tmp";
  UniqueFd file(::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (!file.valid() ||
      ::write(file.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()) ||
      ::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    if (err == ENOSPC || err == EDQUOT) {
      return absl::ResourceExhaustedError("no space: writing the image record");
    }
    return absl::InternalError(absl::StrCat("writing the image record: ", strerror(err)));
  }
  return absl::OkStatus();
}

absl::StatusOr<ImageRecord> ReadImageRecord(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) {
    return text.status();
  }
  try {
    const nlohmann::json json = nlohmann::json::parse(*text);
    ImageRecord record;
    record.reference = json.at("reference").get<std::string>();
    for (const auto& layer : json.at("layers")) {
      absl::string_view hex = layer.at("digest").get_ref<const std::string&>();
      absl::ConsumePrefix(&hex, "sha256:");
      record.layers.push_back({.hex = std::string(hex),
                               .blob_bytes = layer.at("blob_bytes").get<int64_t>(),
                               .unpacked_bytes = layer.at("unpacked_bytes").get<int64_t>()});
    }
    for (const auto& blob : json.at("other_blobs")) {
      absl::string_view hex = blob.get_ref<const std::string&>();
      absl::ConsumePrefix(&hex, "sha256:");
      record.other_blobs.emplace_back(hex);
    }
    record.config_json = json.at("config").get<std::string>();
    record.last_used_unix_micros = json.at("last_used_unix_micros").get<int64_t>();
    return record;
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("image record ", path, ": ", e.what()));
  }
}

}  // namespace gpuaas::agent
