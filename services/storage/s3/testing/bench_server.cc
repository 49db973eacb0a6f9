// An S3TestStack that serves until interrupted, for measuring throughput with real clients:
//   build/services/storage/s3/testing/storage_s3_bench_server   (prints its endpoint and keys)
#include <signal.h>
#include <unistd.h>

#include <iostream>

#include "libs/common/logging.h"
#include "services/storage/s3/testing/test_stack.h"

int main() {
  using namespace gpuaas::storage::s3::testing;
  gpuaas::SetLogLevel(getenv("GPUAAS_LOG_LEVEL") ? getenv("GPUAAS_LOG_LEVEL") : "warn");
  S3TestStack stack;
  std::cout << "endpoint " << stack.endpoint() << "\nbucket " << kBucketA << "\nkey " << kKeyRw.id
            << "\nsecret " << kKeyRw.secret << "\ndata " << stack.data_root().string() << std::endl;
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  int sig = 0;
  sigwait(&set, &sig);
  return 0;
}
