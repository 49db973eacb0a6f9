// images create|get|list|delete
#include <memory>

#include "absl/strings/str_cat.h"
#include "tools/gpuaasctl/commands.h"
#include "tools/gpuaasctl/instance_tables.h"

namespace gpuaas::ctl {
namespace {

struct ImageFlags {
  std::string image;  // name, or name:version
  std::string version;
  std::string description;
  std::string command;
  std::string oci_reference;
  TemplateFlags defaults;
  PageFlags page;
};

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
  GPUAAS_ASSIGN_OR_RETURN(*image->mutable_defaults(), ParseTemplate(f.defaults));
  GPUAAS_ASSIGN_OR_RETURN(instancepb::Image resp, s.Call(&InstanceClient::CreateImage, req));
  return PrintImage(ctx, resp);
}

}  // namespace

void AddImageCommands(CLI::App& root, Context& ctx) {
  CLI::App* group =
      root.add_subcommand("images", "the catalog of workload images")->require_subcommand(1);

  auto create = std::make_shared<ImageFlags>();
  CLI::App* sub = group->add_subcommand(
      "create", "add an image version (platform admins; the same image again is a no-op)");
  sub->add_option("image", create->image, "image name: [a-z0-9-], 1..63")->required();
  sub->add_option("--version", create->version, "version, e.g. 1.10.1")->required();
  sub->add_option("--command", create->command, "what the process runtime runs (/bin/sh -c)");
  sub->add_option("--description", create->description, "free text for people");
  sub->add_option("--oci", create->oci_reference, "OCI image reference, for container runtimes");
  sub->add_option("--port", create->defaults.ports,
                  "default port, repeatable: PORT[/tcp|/http][,probe][,public][,base=/path]");
  sub->add_option("--env", create->defaults.envs, "default NAME=VALUE, repeatable");
  sub->add_option("--volume", create->defaults.volumes,
                  "default NAME=/mount/path[,ro][,sub=dir], repeatable");
  sub->add_option("--probe-timeout", create->defaults.probe_timeout,
                  "default probe timeout (e.g. 10m)");
  OnRun(sub, ctx, [&ctx, create](Session& s) { return Create(ctx, s, *create); });

  auto get = std::make_shared<ImageFlags>();
  sub = group->add_subcommand("get", "show an image (name:version, or name for the newest)");
  sub->add_option("image", get->image, "name or name:version")->required();
  OnRun(sub, ctx, [&ctx, get](Session& s) -> absl::Status {
    instancepb::GetImageRequest req;
    req.set_image(get->image);
    GPUAAS_ASSIGN_OR_RETURN(instancepb::Image resp, s.Call(&InstanceClient::GetImage, req));
    return PrintImage(ctx, resp);
  });

  auto list = std::make_shared<ImageFlags>();
  sub = group->add_subcommand("list", "list images");
  sub->add_option("--name", list->image, "only versions of this image");
  AddPageFlags(sub, list->page);
  OnRun(sub, ctx, [&ctx, list](Session& s) -> absl::Status {
    instancepb::ListImagesRequest req;
    req.set_name(list->image);
    instancepb::ListImagesResponse resp;
    GPUAAS_RETURN_IF_ERROR(ListPages(s, &InstanceClient::ListImages, req, list->page, resp));
    return ctx.Print(resp, [&] { return ImageTable(resp.images()); });
  });

  auto del = std::make_shared<ImageFlags>();
  sub = group->add_subcommand("delete", "remove an image version (instances keep their copy)");
  sub->add_option("image", del->image, "name:version")->required();
  OnRun(sub, ctx, [&ctx, del](Session& s) -> absl::Status {
    instancepb::DeleteImageRequest req;
    req.set_image(del->image);
    GPUAAS_ASSIGN_OR_RETURN(instancepb::DeleteImageResponse resp,
                            s.Call(&InstanceClient::DeleteImage, req));
    return ctx.Print(resp, [&] { return absl::StrCat("deleted image ", del->image, "\n"); });
  });
}

}  // namespace gpuaas::ctl
