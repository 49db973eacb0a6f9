#include "tests/images/image_stack.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "tests/images/test_registry.h"

namespace gpuaas::images_testing {
namespace {

namespace fs = std::filesystem;
namespace storagepb = ::gpuaas::storage::v1;

// Where tools/install-images puts the programs, the path the catalog's commands name.
constexpr char kInstalledImages[] = "/usr/local/lib/gpuaas/images";

std::string ReadWhole(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string Describe(const CommandOutput& r) {
  return absl::StrCat("exit ", r.exit_code, "\nstdout: ", r.out, "\nstderr: ", r.err);
}

}  // namespace

ImageStack::ImageStack(const std::string& dsn, fs::path dir, std::vector<AgentSpec> agents)
    : dir_(std::move(dir)) {
  // The sandboxes run what is installed, not this checkout: a stale copy would test old code.
  const fs::path source = fs::path(GPUAAS_SOURCE_DIR) / "tools" / "images";
  for (const auto& image : fs::directory_iterator(source)) {
    if (!image.is_directory()) continue;
    for (const auto& file : fs::directory_iterator(image.path())) {
      const fs::path installed =
          fs::path(kInstalledImages) / image.path().filename() / file.path().filename();
      EXPECT_EQ(ReadWhole(installed), ReadWhole(file.path()))
          << installed << " differs from " << file.path() << ": run tools/install-images";
    }
  }
  platform_testing::PlatformOptions options;
  options.agents = std::move(agents);
  // The operator allows the fixture's loopback registries (the dev stack allows its own).
  for (auto registry : {OpenTestRegistry(), LoginTestRegistry()}) {
    if (registry.ok()) options.registries.push_back(registry->address);
  }
  platform_ = std::make_unique<PlatformStack>(dsn, dir_, std::move(options));
  proxy_ = std::make_unique<proxy_testing::ProxyProcess>(dir_, platform_->instance().address(),
                                                         platform_->auth().address(),
                                                         platform_->proxy_api_key_file().string());
  CreateCatalog();
}

void ImageStack::CreateCatalog() {
  const fs::path home = dir_ / "ctl-home";
  fs::create_directories(home);
  // The catalog's images are the OCI images in the `registry` fixture's open registry, pinned
  // by the instance service at create; they bind every address of their own network namespace
  // (the script's default).
  const absl::StatusOr<images_testing::TestRegistry> registry = images_testing::OpenTestRegistry();
  ASSERT_TRUE(registry.ok()) << registry.status();
  const CommandOutput r =
      RunCommand({"/bin/bash", absl::StrCat(GPUAAS_SOURCE_DIR, "/tools/images/create-images"),
                  "--registry", registry->address, GPUAAS_CTL_BINARY, "--auth-addr",
                  platform_->auth().address(), "--instance-addr", platform_->instance().address()},
                 {"HOME=" + home.string(), "XDG_CONFIG_HOME=" + home.string(),
                  "GPUAAS_TOKEN=" + platform_->admin_token()});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
}

instancepb::Instance ImageStack::RunImage(const std::string& token, const std::string& instance_id,
                                          const std::string& image, const std::string& storage_id,
                                          const instancepb::Template& tmpl) {
  instancepb::CreateInstanceRequest req;
  *req.mutable_template_() = tmpl;
  req.set_instance_id(instance_id);
  req.set_spec_name("a100.1x");
  req.set_image(image);
  req.set_storage_id(storage_id);
  instancepb::Instance created;
  const grpc::Status s =
      platform_->instances().CreateInstance(PlatformStack::Ctx(token).get(), req, &created);
  if (!s.ok()) {
    ADD_FAILURE() << "CreateInstance " << instance_id << ": " << s.error_message();
    return created;
  }
  return WaitState(token, instance_id, instancepb::STATE_RUNNING);
}

void ImageStack::Stop(const std::string& token, const std::string& instance_id) {
  instancepb::StopInstanceRequest req;
  req.set_instance_id(instance_id);
  instancepb::Instance out;
  const grpc::Status s =
      platform_->instances().StopInstance(PlatformStack::Ctx(token).get(), req, &out);
  EXPECT_TRUE(s.ok()) << s.error_message();
  WaitState(token, instance_id, instancepb::STATE_STOPPED);
}

instancepb::Instance ImageStack::Start(const std::string& token, const std::string& instance_id) {
  instancepb::StartInstanceRequest req;
  req.set_instance_id(instance_id);
  instancepb::Instance out;
  const grpc::Status s =
      platform_->instances().StartInstance(PlatformStack::Ctx(token).get(), req, &out);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return WaitState(token, instance_id, instancepb::STATE_RUNNING);
}

instancepb::Instance ImageStack::WaitState(const std::string& token, const std::string& instance_id,
                                           instancepb::State state) {
  // A FAILED instance never gets there: stop waiting at once and show why.
  instancepb::Instance i = platform_->WaitInstance(
      token, instance_id,
      [state](const instancepb::Instance& x) {
        return x.state() == state || x.state() == instancepb::STATE_FAILED;
      },
      absl::Seconds(120));
  EXPECT_EQ(i.state(), state) << i.DebugString() << "\ninstance log:\n"
                              << platform_->instance().Log();
  return i;
}

std::vector<std::string> ImageStack::AccessFlags(const instancepb::Instance& instance, int port,
                                                 const std::string& token) const {
  for (const instancepb::PortMapping& m : instance.ports()) {
    if (m.port() != port) continue;
    // Through the access proxy, as a tenant's client: it routes on the Host header.
    return {"--base-url", absl::StrCat("http://127.0.0.1:", proxy_->port(), "/"),
            "--host",     proxy_testing::HostOf(instance.instance_id(), port),
            "--header",   "Authorization: Bearer " + token};
  }
  ADD_FAILURE() << "instance " << instance.instance_id() << " has no port " << port;
  return {"--base-url", "http://127.0.0.1:1/"};
}

CommandOutput ImageStack::RunClient(const std::string& script, const std::vector<std::string>& args,
                                    nlohmann::json* json) const {
  std::vector<std::string> argv = {"/usr/bin/python3",
                                   absl::StrCat(GPUAAS_SOURCE_DIR, "/tests/images/", script)};
  argv.insert(argv.end(), args.begin(), args.end());
  CommandOutput r = RunCommand(argv, {"HOME=" + (dir_ / "client-home").string(), "LANG=C.UTF-8"});
  if (json != nullptr) {
    *json = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
    if (json->is_discarded()) *json = nullptr;
  }
  return r;
}

std::string ImageStack::S3Get(const std::string& token, const std::string& storage_id,
                              const std::string& key) {
  storagepb::CreateAccessorRequest req;
  req.set_storage_id(storage_id);
  req.set_read_only(true);
  req.set_description("tests/images");
  storagepb::CreateAccessorResponse accessor;
  const grpc::Status s =
      platform_->storage_stub().CreateAccessor(PlatformStack::Ctx(token).get(), req, &accessor);
  if (!s.ok()) {
    ADD_FAILURE() << "CreateAccessor: " << s.error_message();
    return "";
  }
  const fs::path home = dir_ / absl::StrCat("aws-", ++accessors_);
  fs::create_directories(home);
  std::ofstream(home / "config") << "[default]\nregion = us-east-1\ns3 =\n"
                                    "    addressing_style = path\n";
  const fs::path out = home / "object";
  const CommandOutput r = RunCommand(
      {"/usr/bin/aws", "--endpoint-url", platform_->s3_endpoint(), "s3", "cp",
       absl::StrCat("s3://", storage_id, "/", key), out.string()},
      {"HOME=" + home.string(), "AWS_CONFIG_FILE=" + (home / "config").string(),
       "AWS_SHARED_CREDENTIALS_FILE=" + (home / "credentials").string(),
       "AWS_ACCESS_KEY_ID=" + accessor.access_key_id(),
       "AWS_SECRET_ACCESS_KEY=" + accessor.secret_access_key(), "AWS_DEFAULT_REGION=us-east-1",
       "AWS_EC2_METADATA_DISABLED=true", "AWS_PAGER=", "LC_ALL=C.UTF-8"});
  if (r.exit_code != 0) {
    ADD_FAILURE() << "aws s3 cp s3://" << storage_id << "/" << key << ": " << Describe(r);
    return "";
  }
  return ReadWhole(out);
}

}  // namespace gpuaas::images_testing
