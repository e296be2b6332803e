// kiln devices: the Vulkan devices this machine has, with the identity a context binary records and the
// features the shaders use. `--ops` adds the op types the Vulkan EP has kernels for.
#include <cstdio>

#include "cli_output.h"
#include "commands.h"
#include "engine_json.h"
#include "kiln/device.h"

namespace kiln::cli {
namespace {

using app::toJson;

struct DevicesArgs {
  bool ops = false;
  bool profile = false;
  uint32_t device = 0;
  CommonFlags flags;
};

const char* yes(bool value) { return value ? "yes" : "no"; }

int runDevices(const DevicesArgs& args) {
  configureLogging(args.flags);
  if (args.profile) {
    // A profile is JSON by definition: printed as is, whatever --json says.
    auto profile = vulkanDeviceProfile(args.device);
    if (!profile.isOk()) return reportError(profile.status(), args.flags);
    std::fputs(profile->c_str(), stdout);
    return kExitOk;
  }
  auto devices = listVulkanDevices();
  if (!devices.isOk()) return reportError(devices.status(), args.flags);
  if (args.flags.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& d : *devices) list.push_back(toJson(d));
    nlohmann::json document = {{"devices", list}};
    if (args.ops) document["vulkan_ops"] = vulkanKernelOpTypes();
    printJson(document);
    return kExitOk;
  }
  for (const auto& d : *devices) {
    std::printf("%u: %s (%s%s)\n", d.index, d.name.c_str(), vulkanDeviceTypeName(d.type),
                d.usedByDefault ? "" : ", used only with --ep vulkan or kiln.vulkan.device");
    std::printf("   vendor 0x%04x device 0x%04x, Vulkan %s, driver %s: %s\n", d.vendorId, d.deviceId,
                d.apiVersion.c_str(), d.driverName.c_str(), d.driverInfo.c_str());
    std::printf("   pipeline cache UUID %s\n", d.pipelineCacheUuid.c_str());
    std::printf("   subgroup %u (arithmetic %s), fp16 %s, 16-bit storage %s, 8-bit storage %s, int64 %s\n",
                d.subgroupSize, yes(d.subgroupArithmetic), yes(d.shaderFloat16), yes(d.storageBuffer16Bit),
                yes(d.storageBuffer8Bit), yes(d.shaderInt64));
    std::printf("   push descriptors %s, unified memory %s, timestamps %s, max storage buffer %llu MiB, %llu MiB device-local\n",
                yes(d.pushDescriptors), yes(d.unifiedMemory), yes(d.timestampQueries),
                static_cast<unsigned long long>(d.maxStorageBufferRange >> 20),
                static_cast<unsigned long long>(d.deviceLocalBytes >> 20));
  }
  if (args.ops) {
    std::printf("Vulkan kernels:");
    for (const auto& op : vulkanKernelOpTypes()) std::printf(" %s", op.c_str());
    std::printf("\n");
  }
  return kExitOk;
}

}  // namespace

void registerDevices(CLI::App& app, Commands& commands) {
  auto args = std::make_shared<DevicesArgs>();
  CLI::App* cmd = app.add_subcommand("devices", "List Vulkan devices with their identity and features");
  cmd->add_flag("--ops", args->ops, "Also list the op types the Vulkan EP has kernels for");
  cmd->add_flag("--profile", args->profile,
                "Print the device profile (JSON: identity, features, limits) of the device given by --device");
  cmd->add_option("--device", args->device, "Device index for --profile (default 0)");
  addCommonFlags(*cmd, args->flags);
  cmd->footer("\nExamples:\n  kiln devices\n  kiln devices --json --ops\n  kiln devices --profile --device 0 > gpu.json");
  cmd->callback([args, &commands] { commands.run = [args] { return runDevices(*args); }; });
}

}  // namespace kiln::cli
