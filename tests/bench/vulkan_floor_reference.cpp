// What the engine does when it loads a context binary, for comparison with kiln_vulkan_floor on the same file
// (vulkan_floor_check.py): the pipelines it creates and the bytes it uploads.
//
// Usage: kiln_vulkan_floor_reference MODEL BINARY [--device N|NAME]
// Compiles MODEL in this process as `kiln compile` does (a session's compiled model: the rewritten model that
// a binary's partitions plug into, and each kernel's absorbed inputs, which a binary does not store), checks
// that BINARY holds the same partitions, computes the bytes VulkanPartitionExecutable::build uploads for
// them, releases the compiling session and closes the device (and with it its pipelines), then creates a session
// from BINARY with createSessionFromBinary and prints its counters and timings. Timings come from a process
// that compiled already (Vulkan instance and glslang warm): they are informative, not a cold measurement.
// Exit 0 ok, 1 failure, 2 usage.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "context_binary/context_binary.h"
#include "ep/vulkan/vulkan_device.h"
#include "kiln/session.h"
#include "session/inference_session.h"
#include "session/session_from_binary.h"

namespace {

struct UploadTotal {
  uint64_t bytes = 0;
  uint64_t tensors = 0;
};

// VulkanPartitionExecutable::build's uploads: initializers a device kernel reads without folding them into
// its constants (strings excepted), then every device kernel's constants.
UploadTotal engineUploads(const kiln::CompiledPartition& partition) {
  UploadTotal total;
  const kiln::ir::Graph& graph = *partition.graph;
  std::set<std::string> deviceRead;
  for (size_t i = 0; i < graph.nodes.size() && i < partition.nodes.size(); ++i) {
    const kiln::CompiledNode& node = partition.nodes[i];
    if (node.onHost) continue;
    for (size_t k = 0; k < graph.nodes[i].inputs.size(); ++k) {
      const auto& absorbed = node.absorbedInputs;
      if (std::find(absorbed.begin(), absorbed.end(), k) == absorbed.end())
        deviceRead.insert(graph.nodes[i].inputs[k]);
    }
    for (const kiln::Tensor& constant : node.constants) {
      total.bytes += constant.byteSize();
      total.tensors += 1;
    }
  }
  for (const auto& [name, tensor] : graph.initializers) {
    if (deviceRead.count(name) && tensor.dtype() != kiln::DataType::STRING) {
      total.bytes += tensor.byteSize();
      total.tensors += 1;
    }
  }
  return total;
}

std::set<std::string> spirvKeys(const kiln::CompiledPartition& partition) {
  std::set<std::string> keys;
  for (const auto& [key, words] : partition.spirv) keys.insert(key);
  return keys;
}

int fail(const std::string& message) {
  std::fprintf(stderr, "kiln_vulkan_floor_reference: %s\n", message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string model, binary, device;
  bool usage = false;
  for (int i = 1; i < argc && !usage; ++i) {
    const std::string a = argv[i];
    if (a == "--device" && i + 1 < argc)
      device = argv[++i];
    else if (model.empty() && a.rfind("--", 0) != 0)
      model = a;
    else if (binary.empty() && a.rfind("--", 0) != 0)
      binary = a;
    else
      usage = true;
  }
  if (usage || model.empty() || binary.empty()) {
    std::fprintf(stderr, "usage: kiln_vulkan_floor_reference MODEL BINARY [--device N|NAME]\n");
    return 2;
  }
  kiln::SessionOptions options;
  if (!options.addConfigEntry("kiln.execution_providers", "vulkan,cpu").isOk() ||
      (!device.empty() && !options.addConfigEntry("kiln.vulkan.device", device).isOk())) {
    return fail("cannot set the session options");
  }

  kiln::CompiledModel compiled;
  {
    auto session = kiln::Session::create(model, options);
    if (!session.isOk()) return fail("compiling " + model + ": " + session.status().toString());
    auto of = kiln::compiledModelOf(**session);
    if (!of.isOk()) return fail(of.status().toString());
    compiled = std::move(of).value();
  }  // the compiling session goes: the load below creates its device and pipelines afresh

  auto opened = kiln::ctxbin::ContextBinary::open(binary);
  if (!opened.isOk()) return fail(opened.status().toString());
  auto stored = (*opened)->partitions();
  if (!stored.isOk()) return fail(stored.status().toString());
  if (stored->size() != compiled.partitions.size()) {
    return fail(binary + " holds " + std::to_string(stored->size()) + " partitions, compiling " + model +
                " gives " + std::to_string(compiled.partitions.size()));
  }
  UploadTotal uploads;
  std::set<std::string> keys;
  for (size_t p = 0; p < stored->size(); ++p) {
    const kiln::CompiledPartition& a = compiled.partitions[p];
    const kiln::CompiledPartition& b = (*stored)[p];
    if (a.name != b.name || a.graph->nodes.size() != b.graph->nodes.size() || spirvKeys(a) != spirvKeys(b)) {
      return fail("partition " + std::to_string(p) + " of " + binary + " ('" + b.name +
                  "') is not what compiling " + model + " gives ('" + a.name +
                  "'): was the binary compiled from another model or device?");
    }
    const UploadTotal partition = engineUploads(a);
    uploads.bytes += partition.bytes;
    uploads.tensors += partition.tensors;
    for (const auto& key : spirvKeys(a)) keys.insert(key);
  }

  // Devices stay open for the process (and keep their pipelines); close the one the compile used, so the load
  // creates its pipelines as a fresh process does.
  kiln::vk::Device::releaseUnused();
  const auto started = std::chrono::steady_clock::now();
  auto loaded = kiln::createSessionFromBinary(std::move(compiled.model), binary, options);
  const double wallMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  if (!loaded.isOk()) return fail("loading " + binary + ": " + loaded.status().toString());

  nlohmann::ordered_json out;
  out["model"] = model;
  out["binary"] = binary;
  out["partitions"] = stored->size();
  out["variant_keys"] = keys.size();
  out["upload_bytes"] = uploads.bytes;
  out["upload_tensors"] = uploads.tensors;
  kiln::forEachCounter((*loaded)->counters(), [&](std::string_view key, int64_t value) {
    out["counters"][std::string(key)] = value;
  });
  kiln::forEachTiming((*loaded)->timings(),
                      [&](std::string_view key, double value) { out["timings"][std::string(key)] = value; });
  out["load_wall_ms"] = wallMs;
  std::printf("%s\n", out.dump(2).c_str());
  return 0;
}
