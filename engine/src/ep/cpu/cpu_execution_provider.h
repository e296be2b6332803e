// The CPU execution provider: reference kernels for the ONNX op set; the fallback for every other EP.
#pragma once

#include "ep/execution_provider.h"

namespace kiln::cpu {

class CpuExecutionProvider final : public ExecutionProvider {
 public:
  static const std::string kName;  // "CPUExecutionProvider"

  // Sets OpenBLAS to one thread (process-wide): the EP splits GEMMs over its own pool (kiln.intra_op_num_threads),
  // and OpenBLAS threads beside it would only spin.
  CpuExecutionProvider();

  const std::string& name() const override { return kName; }
  std::vector<NodeSupport> getCapability(const ir::Graph& graph, const ir::Model& model) const override;
  Result<CompiledPartition> compile(const ir::Graph& graph, const PartitionSpec& spec,
                                    const CompileContext& context) override;
  Result<std::unique_ptr<PartitionExecutable>> load(const CompiledPartition& partition,
                                                    const CompileContext& context) override;
};

}  // namespace kiln::cpu
