// images create|get|list|delete
#include <cstdlib>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tools/gpuaasctl/commands.h"
#include "tools/gpuaasctl/instance_tables.h"
#include "tools/gpuaasctl/secret_input.h"

namespace gpuaas::ctl {
namespace {

struct ImageFlags {
  std::string image;  // name, or name:version
  std::string version;
  std::string description;
  std::string command;
  std::string oci_reference;
  std::string registry_user;
  bool deny_egress = false;
  bool no_wait = false;
  std::string tenant;
  TemplateFlags defaults;
  PageFlags page;
};

// Where a registry password comes from: never the command line (every user sees it in `ps`).
constexpr char kRegistryPasswordEnv[] = "GPUAAS_REGISTRY_PASSWORD";

absl::Status PrintImage(Context& ctx, const instancepb::Image& image) {
  return ctx.Print(image, [&] { return ImageDetail(image); });
}

absl::Status Create(Context& ctx, Session& s, const ImageFlags& f) {
  instancepb::CreateImageRequest req;
  instancepb::Image* image = req.mutable_image();
  image->set_name(f.image);
  image->set_version(f.version);
  image->set_description(f.description);
  image->set_command(f.command);
  image->set_oci_reference(f.oci_reference);
  image->set_deny_egress(f.deny_egress);
  image->set_tenant_id(f.tenant);
  if (!f.registry_user.empty()) {
    const char* env = std::getenv(kRegistryPasswordEnv);
    GPUAAS_ASSIGN_OR_RETURN(
        *req.mutable_registry_credentials()->mutable_password(),
        ReadSecret(absl::StrCat("password of ", f.registry_user, ": "), env ? env : "", ""));
    req.mutable_registry_credentials()->set_username(f.registry_user);
  }
  GPUAAS_ASSIGN_OR_RETURN(*image->mutable_defaults(), ParseTemplate(f.defaults));
  GPUAAS_ASSIGN_OR_RETURN(instancepb::Image resp, s.Call(&InstanceClient::CreateImage, req));
  // The service pins in the background; a user who ran `create` wants to know how that went.
  const absl::Time until = absl::Now() + absl::Minutes(2);
  while (!f.no_wait && resp.state() == instancepb::IMAGE_STATE_PENDING && absl::Now() < until) {
    absl::SleepFor(absl::Milliseconds(250));
    instancepb::GetImageRequest get;
    get.set_image(absl::StrCat(resp.name(), ":", resp.version()));
    get.set_tenant_id(resp.tenant_id());
    GPUAAS_ASSIGN_OR_RETURN(resp, s.Call(&InstanceClient::GetImage, get));
  }
  if (resp.state() == instancepb::IMAGE_STATE_FAILED) {
    return absl::FailedPreconditionError(absl::StrCat("image ", resp.name(), ":", resp.version(),
                                                      " could not be pinned: ", resp.state_reason(),
                                                      " (fix it, then create it again to retry)"));
  }
  return PrintImage(ctx, resp);
}

}  // namespace

void AddImageCommands(CLI::App& root, Context& ctx) {
  CLI::App* group =
      root.add_subcommand("images", "workload images: the platform's catalog and your tenant's own")
          ->require_subcommand(1);

  auto create = std::make_shared<ImageFlags>();
  CLI::App* sub = group->add_subcommand(
      "create",
      "add an image version: members add their tenant's own, platform admins the catalog's "
      "(the same image again is a no-op, or retries a FAILED pin). --oci is pinned to its "
      "digest in the background (PENDING, then READY or FAILED; this waits for it unless "
      "--no-wait); instances run those bytes. A private registry: --registry-user USER, the "
      "password from $" +
          std::string(kRegistryPasswordEnv) +
          " or stdin (never an argument); it is kept sealed and never shown again.\n"
          "  e.g. echo \"$TOKEN\" | gpuaasctl images create myapp --version 1 \\\n"
          "         --oci 127.0.0.1:5000/acme/myapp:1 --registry-user acme --port 8080/http,probe");
  sub->add_option("image", create->image, "image name: [a-z0-9-], 1..63")->required();
  sub->add_option("--version", create->version, "version, e.g. 1.10.1")->required();
  sub->add_option("--command", create->command, "what the process runtime runs (/bin/sh -c)");
  sub->add_option("--description", create->description, "free text for people");
  sub->add_option("--oci", create->oci_reference,
                  "OCI image reference (host/repo:tag or host/repo@sha256:...), pinned by digest");
  sub->add_option("--registry-user", create->registry_user,
                  "the registry login's user; its password from $" +
                      std::string(kRegistryPasswordEnv) + " or stdin");
  sub->add_flag("--deny-egress", create->deny_egress,
                "its workloads may not connect out of the node");
  sub->add_flag("--no-wait", create->no_wait,
                "answer at once, the image PENDING while its reference is pinned");
  sub->add_option("--tenant", create->tenant,
                  "global roles: the tenant whose image it is (empty: the catalog)");
  sub->add_option("--port", create->defaults.ports,
                  "default port, repeatable: PORT[/tcp|/http][,probe][,public][,base=/path]");
  sub->add_option("--env", create->defaults.envs, "default NAME=VALUE, repeatable");
  sub->add_option("--secret-env-file", create->defaults.secret_env_files,
                  "default secret NAME=FILE (FILE's first line; write-only), repeatable");
  sub->add_option("--volume", create->defaults.volumes,
                  "default NAME=/mount/path[,ro][,sub=dir], repeatable");
  sub->add_option("--probe-timeout", create->defaults.probe_timeout,
                  "default probe timeout (e.g. 10m)");
  OnRun(sub, ctx, [&ctx, create](Session& s) { return Create(ctx, s, *create); });

  auto get = std::make_shared<ImageFlags>();
  sub = group->add_subcommand("get", "show an image (name:version, or name for the newest)");
  sub->add_option("image", get->image, "name or name:version")->required();
  sub->add_option("--tenant", get->tenant, "global roles: the tenant whose image it is");
  OnRun(sub, ctx, [&ctx, get](Session& s) -> absl::Status {
    instancepb::GetImageRequest req;
    req.set_image(get->image);
    req.set_tenant_id(get->tenant);
    GPUAAS_ASSIGN_OR_RETURN(instancepb::Image resp, s.Call(&InstanceClient::GetImage, req));
    return PrintImage(ctx, resp);
  });

  auto list = std::make_shared<ImageFlags>();
  sub = group->add_subcommand("list", "list the catalog's images and your tenant's own (OWNER)");
  sub->add_option("--name", list->image, "only versions of this image");
  sub->add_option("--tenant", list->tenant, "global roles: list this tenant's beside the catalog");
  AddPageFlags(sub, list->page);
  OnRun(sub, ctx, [&ctx, list](Session& s) -> absl::Status {
    instancepb::ListImagesRequest req;
    req.set_name(list->image);
    req.set_tenant_id(list->tenant);
    instancepb::ListImagesResponse resp;
    GPUAAS_RETURN_IF_ERROR(ListPages(s, &InstanceClient::ListImages, req, list->page, resp));
    return ctx.Print(resp, [&] { return ImageTable(resp.images()); });
  });

  auto del = std::make_shared<ImageFlags>();
  sub = group->add_subcommand("delete", "remove an image version (instances keep their copy)");
  sub->add_option("image", del->image, "name:version (your tenant's own, else the catalog's)")
      ->required();
  sub->add_option("--tenant", del->tenant, "global roles: the tenant whose image it is");
  OnRun(sub, ctx, [&ctx, del](Session& s) -> absl::Status {
    instancepb::DeleteImageRequest req;
    req.set_image(del->image);
    req.set_tenant_id(del->tenant);
    GPUAAS_ASSIGN_OR_RETURN(instancepb::DeleteImageResponse resp,
                            s.Call(&InstanceClient::DeleteImage, req));
    return ctx.Print(resp, [&] { return absl::StrCat("deleted image ", del->image, "\n"); });
  });
}

}  // namespace gpuaas::ctl
