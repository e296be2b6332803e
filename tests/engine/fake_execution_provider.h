// A stand-in for a device EP in partitioner tests: it claims a chosen set of op types and compiles and runs its
// partitions with the CPU EP's machinery, so mixed graphs must give exactly the CPU-only results.
#pragma once

#include <atomic>
#include <set>
#include <string>
#include <vector>

#include "ep/cpu/cpu_execution_provider.h"

namespace kiln::testing {

class FakeExecutionProvider final : public ExecutionProvider {
 public:
  explicit FakeExecutionProvider(std::set<std::string> opTypes, std::string name = "FakeExecutionProvider")
      : opTypes_(std::move(opTypes)), name_(std::move(name)) {}

  const std::string& name() const override { return name_; }

  std::vector<NodeSupport> getCapability(const ir::Graph& graph, const ir::Model&) const override {
    std::vector<NodeSupport> answers;
    for (const auto& node : graph.nodes) {
      if (opTypes_.count(node.opType)) answers.push_back({true, ""});
      else answers.push_back({false, "no fake kernel for " + node.opType});
    }
    return answers;
  }

  Result<CompiledPartition> compile(const ir::Graph& graph, const PartitionSpec& spec,
                                    const CompileContext& context) override {
    ++compiles;
    compiledNames.push_back(spec.name);
    KILN_ASSIGN_OR_RETURN(CompiledPartition compiled, cpu_.compile(graph, spec, context));
    compiled.executionProvider = name_;
    return compiled;
  }

  Result<std::unique_ptr<PartitionExecutable>> load(const CompiledPartition& partition,
                                                    const CompileContext& context) override {
    return cpu_.load(partition, context);
  }

  int compiles = 0;
  std::vector<std::string> compiledNames;

 private:
  std::set<std::string> opTypes_;
  std::string name_;
  cpu::CpuExecutionProvider cpu_;
};

}  // namespace kiln::testing
