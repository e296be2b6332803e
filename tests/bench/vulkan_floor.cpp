// The floor of loading a compiled model: the least work any engine must do to get a context binary's
// partitions ready on a Vulkan device, done with raw Vulkan calls: instance + device creation, reading the
// file, creating the same compute pipelines from the same SPIR-V (as many as the engine's pipelines_created,
// with its layouts), and writing the same weight bytes into device memory. Session creation from the compiled
// model is judged against it (epcontext_bench.sh). The engine's context-binary reader only maps and checks
// the file and locates the SPIR-V and the weights.
//
// Usage: kiln_vulkan_floor BINARY [--device N|NAME] [--json]
// Exit codes: 0 ok, 1 failure (no Vulkan device included), 2 usage.
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "vulkan_floor_plan.h"
#include "vulkan_floor_vulkan.h"

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct Args {
  std::string binary;
  std::string device;
  bool json = false;
};

bool parseArgs(int argc, char** argv, Args& args) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--device" && i + 1 < argc) {
      args.device = argv[++i];
    } else if (a == "--json") {
      args.json = true;
    } else if (args.binary.empty() && a.rfind("--", 0) != 0) {
      args.binary = a;
    } else {
      return false;
    }
  }
  return !args.binary.empty();
}

int fail(const kiln::Status& status) {
  std::fprintf(stderr, "kiln_vulkan_floor: %s\n", status.toString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (!parseArgs(argc, argv, args)) {
    std::fprintf(stderr, "usage: kiln_vulkan_floor BINARY [--device N|NAME] [--json]\n");
    return 2;
  }
  using namespace kiln::vkfloor;
  const auto started = Clock::now();

  auto stage = Clock::now();
  auto vulkan = RawVulkan::create(args.device);
  if (!vulkan.isOk()) return fail(vulkan.status());
  const double deviceMs = msSince(stage);

  // Reading = mapping the file and checking its header and section hashes: a binary is untrusted input
  // (engine/ARCHITECTURE.md, Contracts), so no loader may use its bytes unchecked. Measured in a fresh process,
  // mapping the page-cache pages is cheaper than read() into new memory.
  stage = Clock::now();
  auto binary = kiln::ctxbin::ContextBinary::open(args.binary);
  if (!binary.isOk()) return fail(binary.status());
  const double readMs = msSince(stage);
  const uint64_t fileBytes = (*binary)->fileSize();

  // Locating the modules and weights (decoding the graphs section): not part of the floor's work.
  stage = Clock::now();
  auto plan = planFromBinary(std::move(binary).value());
  if (!plan.isOk()) return fail(plan.status());
  const double locateMs = msSince(stage);

  stage = Clock::now();
  if (kiln::Status s = (*vulkan)->createPipelines(*plan); !s.isOk()) return fail(s);
  const double pipelineMs = msSince(stage);

  stage = Clock::now();
  if (kiln::Status s = (*vulkan)->uploadWeights(*plan); !s.isOk()) return fail(s);
  const double uploadMs = msSince(stage);
  const double wallMs = msSince(started);

  nlohmann::ordered_json out;
  out["binary"] = args.binary;
  out["device"] = (*vulkan)->deviceName();
  out["driver_info"] = (*vulkan)->driverInfo();
  out["device_create_ms"] = deviceMs;
  out["instance_create_ms"] = (*vulkan)->instanceMs();  // part of device_create_ms
  out["file_read_ms"] = readMs;
  out["pipeline_create_ms"] = pipelineMs;
  out["weight_upload_ms"] = uploadMs;
  out["total_ms"] = deviceMs + readMs + pipelineMs + uploadMs;
  out["locate_ms"] = locateMs;  // not in total_ms
  out["wall_ms"] = wallMs;      // everything above, locate_ms included
  out["pipelines"] = plan->pipelines.size();
  out["spirv_modules"] = plan->spirvModules;
  out["spirv_bytes"] = plan->spirvBytes;
  out["weight_bytes"] = plan->uploadBytes;
  out["weight_tensors"] = plan->uploads.size();
  out["weight_blob_bytes"] = plan->weightBlobBytes;
  out["file_bytes"] = fileBytes;
  out["partitions"] = plan->partitions.size();
  out["push_constant_bytes"] = plan->pushConstantBytes;
  out["push_descriptors"] = (*vulkan)->pushDescriptors();
  out["weights_written_in_place"] = (*vulkan)->mappableMemory();
  if (args.json) {
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  std::printf("floor of %s on %s (%s)\n", args.binary.c_str(), (*vulkan)->deviceName().c_str(),
              (*vulkan)->driverInfo().c_str());
  for (const char* key :
       {"device_create_ms", "file_read_ms", "pipeline_create_ms", "weight_upload_ms", "total_ms"}) {
    std::printf("  %-20s %10.3f\n", key, out[key].get<double>());
  }
  std::printf("  %zu pipelines from %zu SPIR-V modules, %llu weight bytes in %zu tensors, %zu partitions\n",
              plan->pipelines.size(), plan->spirvModules, static_cast<unsigned long long>(plan->uploadBytes),
              plan->uploads.size(), plan->partitions.size());
  return 0;
}
