#include "libs/service/service_app.h"

#include "libs/common/logging.h"
#include "libs/common/status_macros.h"

namespace gpuaas::service {

absl::Status ServiceApp::Start() {
  GPUAAS_RETURN_IF_ERROR(StartBackground());
  return server_->Start();
}

int ServiceApp::Run() {
  if (absl::Status s = StartBackground(); !s.ok()) {
    Logger(id_.name)->critical("{}", s.ToString());
    return 1;
  }
  const int code = ServeUntilStopped(id_, *server_);
  Stop();
  return code;
}

void ServiceApp::Stop() {
  if (server_) server_->Shutdown();
  StopBackground();
}

void ServiceApp::Close() {
  Stop();
  server_.reset();
}

}  // namespace gpuaas::service
