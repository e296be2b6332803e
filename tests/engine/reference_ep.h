// An execution provider that exists only in the tests, to prove that the framework knows no device: it claims
// Add, Relu and Conv, compiles each partition into its own trivial format (providerData: a format line and the
// kernels it will run), stores that in context binaries through its own context hooks, and runs its partitions
// with the CPU EP's host evaluator after checking that what it stored comes back. Nothing in epcontext/ or
// context_binary/ knows it: registerReferenceProvider() adds it to the EPs a session may name
// (kiln.execution_providers=reference,cpu), as a plugin EP would be added.
#pragma once

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "context_binary/ep_context_hooks.h"
#include "ep/cpu/cpu_execution_provider.h"
#include "session/execution_providers.h"

namespace kiln::testing {

inline const std::string kReferenceProvider = "ReferenceExecutionProvider";
inline const std::string kReferenceShortName = "reference";
inline const std::string kReferenceFormat = "kiln-reference-ep 1";  // the first line of its providerData
inline const std::string kReferenceDevice = "Kiln reference evaluator";

// providerData: the format line, then one kernel name per line (the partition's nodes' op types, in order).
inline std::vector<std::byte> referenceProviderData(const ir::Graph& graph) {
  std::string text = kReferenceFormat + "\n";
  for (const auto& node : graph.nodes) text += node.opType + "\n";
  const auto* p = reinterpret_cast<const std::byte*>(text.data());
  return std::vector<std::byte>(p, p + text.size());
}

// The kernels `data` lists; INVALID_GRAPH when it is not the reference EP's format.
inline Result<std::vector<std::string>> referenceKernels(const std::vector<std::byte>& data) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data.data()), data.size()));
  std::string line;
  if (!std::getline(in, line) || line != kReferenceFormat) {
    return Status(StatusCode::INVALID_GRAPH, "not " + kReferenceFormat + " data");
  }
  std::vector<std::string> kernels;
  while (std::getline(in, line)) kernels.push_back(line);
  return kernels;
}

class ReferenceExecutionProvider final : public ExecutionProvider {
 public:
  const std::string& name() const override { return kReferenceProvider; }

  std::vector<NodeSupport> getCapability(const ir::Graph& graph, const ir::Model&) const override {
    static const std::set<std::string> kClaimed{"Add", "Relu", "Conv"};
    std::vector<NodeSupport> answers;
    for (const auto& node : graph.nodes) {
      const bool claimed = node.domain.empty() && kClaimed.count(node.opType);
      answers.push_back({claimed, claimed ? "" : "no reference kernel for " + node.opType});
    }
    return answers;
  }

  bool exportNeedsLoad() const override { return false; }

  Result<CompiledPartition> compile(const ir::Graph& graph, const PartitionSpec& spec,
                                    const CompileContext& context) override {
    KILN_ASSIGN_OR_RETURN(CompiledPartition compiled, cpu_.compile(graph, spec, context));
    compiled.executionProvider = kReferenceProvider;
    compiled.providerData = referenceProviderData(*compiled.graph);
    return compiled;
  }

  Result<std::unique_ptr<PartitionExecutable>> load(const CompiledPartition& partition,
                                                    const CompileContext& context) override {
    KILN_ASSIGN_OR_RETURN(const std::vector<std::string> kernels, referenceKernels(partition.providerData));
    if (kernels.size() != partition.graph->nodes.size()) {
      return Status(StatusCode::INVALID_GRAPH, "partition '" + partition.name + "' lists " +
                                                   std::to_string(kernels.size()) + " kernels for " +
                                                   std::to_string(partition.graph->nodes.size()) + " nodes");
    }
    ++loads;
    return cpu_.load(partition, context);
  }

  static inline std::atomic<int> loads{0};  // partitions loaded, over every instance

 private:
  cpu::CpuExecutionProvider cpu_;
};

// The "device" its binaries are compiled for. The container's device section still holds a Vulkan-style profile
// (the Vulkan EP's data has not moved into its own sections yet), so the profile's minimums are met.
inline vk::DeviceInfo referenceDevice() {
  vk::DeviceInfo device;
  device.name = kReferenceDevice;
  device.driverInfo = "host evaluator";
  device.type = VulkanDeviceType::CPU;
  device.apiVersion = (1u << 22) | (1u << 12);  // 1.1
  device.maxPushConstantsSize = 128;
  device.subgroupSize = 1;
  return device;
}

class ReferenceContextHooks final : public ctxbin::EpContextHooks {
 public:
  const std::string& executionProvider() const override { return kReferenceProvider; }

  Result<ctxbin::BinaryContents> exportContext(std::vector<CompiledPartition> partitions) const override {
    for (const auto& p : partitions) {
      if (p.executionProvider != kReferenceProvider || p.providerData.empty()) {
        return Status(StatusCode::INVALID_ARGUMENT, "partition '" + p.name + "' is not a reference partition");
      }
    }
    ctxbin::BinaryContents contents;
    contents.partitions = std::move(partitions);
    contents.target = referenceDevice();
    contents.targetKind = ctxbin::TargetKind::PROFILE;  // nothing of a driver to store
    return contents;
  }

  Result<vk::DeviceInfo> liveDevice(const std::string&) const override { return referenceDevice(); }

  CompatibilityVerdict judgeContext(const ctxbin::ContextBinary& binary, const vk::DeviceInfo& device,
                                    const std::string& against) const override {
    if (binary.target().name != device.name) {
      return {Compatibility::UNSUPPORTED, {"compiled for '" + binary.target().name + "'"}, against};
    }
    return {Compatibility::OPTIMAL, {}, against};
  }

  std::shared_ptr<const void> attachDriverCache(const vk::DeviceInfo&, const ctxbin::ContextBinary&) const override {
    return nullptr;
  }

  std::vector<std::pair<std::string, std::string>> describePartition(const CompiledPartition& partition) const override {
    auto kernels = referenceKernels(partition.providerData);
    if (!kernels.isOk()) return {{"format", "unreadable: " + kernels.status().message()}};
    std::string list;
    for (const auto& k : *kernels) list += (list.empty() ? "" : ", ") + k;
    return {{"format", kReferenceFormat}, {"kernels", list}};
  }
};

// Adds the reference EP to the EPs a session may name (idempotent).
inline Status registerReferenceProvider() {
  return registerExecutionProvider({kReferenceShortName, kReferenceProvider,
                                    [] { return std::make_unique<ReferenceExecutionProvider>(); },
                                    std::make_shared<ReferenceContextHooks>()});
}

}  // namespace kiln::testing
