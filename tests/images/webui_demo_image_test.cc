// The catalog's `webui-demo` image end to end on the real platform: a job queued over its JSON
// API reports its progress over the WebSocket step by step to completion, its picture and
// sidecar land in the storage (read back over S3), and the public gallery port shows it.
#include <gtest/gtest.h>

#include "libs/testing/pg_test.h"
#include "libs/testing/temp_dir.h"
#include "tests/images/image_stack.h"

namespace gpuaas::images_testing {
namespace {

constexpr char kPngSignature[] = "\x89PNG\r\n\x1a\n";

class WebuiDemoImageTest : public gpuaas::testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped()) return;
    stack_ = std::make_unique<ImageStack>(dsn(), dir_.path(),
                                          std::vector<AgentSpec>{{"node-a", "1xA100-80GB"}});
    token_ = stack_->platform().CreateTenant("studio");
    stack_->platform().CreateSpecWithStocks("a100.1x", "A100-80GB", 1, 0, 1);
    stack_->platform().CreateStorage(token_, "art");
  }
  void TearDown() override {
    stack_.reset();
    PgTest::TearDown();
  }

  gpuaas::testing::TempDir dir_;
  std::unique_ptr<ImageStack> stack_;
  std::string token_;
};

TEST_F(WebuiDemoImageTest, StreamsAJobsProgressAndWritesItsOutputToTheStorage) {
  const instancepb::Instance sd = stack_->RunImage(token_, "sd-1", "webui-demo", "art");
  ASSERT_EQ(sd.state(), instancepb::STATE_RUNNING);

  std::vector<std::string> args = stack_->AccessFlags(sd, 7860, token_);
  args.insert(args.end(), {"--prompt", "a lighthouse at dusk", "--steps", "12"});
  nlohmann::json run;
  const CommandOutput r = stack_->RunClient("webui_generate.py", args, &run);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ASSERT_TRUE(run.is_object()) << r.out;

  // Every step arrived, in order, ending in done (the socket sends the job's state on open,
  // so the first step seen depends on when it connected, never the last; step 0 comes twice
  // when it connected while the job was still queued).
  const std::vector<int> steps = run["steps"].get<std::vector<int>>();
  ASSERT_FALSE(steps.empty());
  for (size_t i = 1; i < steps.size(); ++i) {
    EXPECT_EQ(steps[i], steps[i - 1] + (steps[i - 1] == 0 && steps[i] == 0 ? 0 : 1)) << run;
  }
  EXPECT_EQ(steps.back(), 12);
  EXPECT_EQ(run["states"].back(), "done") << run;
  EXPECT_EQ(run["final"]["total"], 12);
  EXPECT_EQ(run["job"]["state"], "done");

  const std::string job_id = run["job_id"];
  EXPECT_EQ(run["final"]["output"], "outputs/" + job_id + ".png");
  const std::string png = stack_->S3Get(token_, "art", "outputs/" + job_id + ".png");
  EXPECT_EQ(png.substr(0, 8), std::string(kPngSignature, 8));
  const nlohmann::json sidecar = nlohmann::json::parse(
      stack_->S3Get(token_, "art", "outputs/" + job_id + ".json"), nullptr, false);
  EXPECT_EQ(sidecar.value("prompt", ""), "a lighthouse at dusk") << sidecar;
  EXPECT_EQ(sidecar.value("steps", 0), 12);
  EXPECT_EQ(sidecar.value("instance_id", ""), "sd-1");

  // curl through the proxy with the Host of `flags` (AccessFlags) and, unless `anonymous`, the
  // tenant's token, then `args`.
  const auto curl = [](const std::vector<std::string>& flags, bool anonymous,
                       std::vector<std::string> args) {
    std::vector<std::string> argv = {"/usr/bin/curl", "-sS", "--noproxy", "*"};
    for (size_t i = 0; i + 1 < flags.size(); i += 2) {
      if (flags[i] == "--host") argv.insert(argv.end(), {"-H", "Host: " + flags[i + 1]});
      if (flags[i] == "--header" && !anonymous) argv.insert(argv.end(), {"-H", flags[i + 1]});
    }
    argv.insert(argv.end(), args.begin(), args.end());
    return RunCommand(argv, {});
  };

  // Bad requests are refused with a reason, and queue nothing.
  const std::vector<std::string> ui = stack_->AccessFlags(sd, 7860, token_);
  const std::string ui_url = ui.at(1);
  for (const char* body : {R"({"prompt": "", "steps": 5})", R"({"prompt": "x", "steps": 0})",
                           R"({"prompt": "x", "steps": "many"})", R"(not json)"}) {
    const CommandOutput bad = curl(
        ui, false, {"-w", " %{http_code}", "-X", "POST", "--data", body, ui_url + "api/generate"});
    EXPECT_NE(bad.out.find("\"error\""), std::string::npos) << body << ": " << bad.out;
    EXPECT_TRUE(bad.out.ends_with(" 400")) << body << ": " << bad.out;
  }
  const CommandOutput unknown =
      curl(ui, false, {"-w", " %{http_code}", ui_url + "api/jobs/0123456789abcdef"});
  EXPECT_TRUE(unknown.out.ends_with(" 404")) << unknown.out;
  // The WebUI's port is private: without the token the proxy answers 401.
  EXPECT_EQ(curl(ui, true, {"-o", "/dev/null", "-w", "%{http_code}", ui_url}).out, "401");

  // The gallery, the catalog's public port, lists the picture to anyone (no token through the
  // proxy); it has no API to write with.
  ASSERT_EQ(sd.ports_size(), 2);
  const std::vector<std::string> gallery = stack_->AccessFlags(sd, 7861, token_);
  const std::string page_url = gallery.at(1);
  CommandOutput page = curl(gallery, true, {page_url});
  EXPECT_NE(page.out.find("outputs/" + job_id + ".png"), std::string::npos) << page.out;
  page = curl(gallery, true,
              {"-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "--data", "{}",
               page_url + "api/generate"});
  EXPECT_EQ(page.out, "404");
}

}  // namespace
}  // namespace gpuaas::images_testing
