// Session: a loaded, partitioned and compiled model that runs inferences.
#pragma once

#include "kiln/export.h"

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kiln/io_binding.h"
#include "kiln/partition_report.h"
#include "kiln/run_options.h"
#include "kiln/run_profile.h"
#include "kiln/session_options.h"
#include "kiln/status.h"
#include "kiln/tensor.h"
#include "kiln/timings.h"
#include "kiln/value.h"
#include "kiln/value_metadata.h"

namespace kiln {

// One line of the partition report (partitionReport() has the details).
struct KILN_EXPORT PartitionSummary {
  std::string name;
  std::string executionProvider;
  int64_t nodeCount = 0;
};

class KILN_EXPORT Session {
 public:
  // Releases the session's partitions and its hold on shared devices, thread pools and binaries (environment.h).
  virtual ~Session() = default;

  // Loads, checks, partitions and compiles the model at `path`.
  static Result<std::unique_ptr<Session>> create(const std::string& path, const SessionOptions& options = {});
  // Same, from a serialized ModelProto in memory (external data resolves against
  // session.model_external_initializers_file_folder_path, required when the model has external data).
  static Result<std::unique_ptr<Session>> create(std::span<const std::byte> modelBytes,
                                                 const SessionOptions& options = {});

  // The graph inputs a run must feed (initializers excluded), in declaration order.
  virtual const std::vector<ValueMetadata>& inputs() const = 0;
  // The graph outputs, in declaration order.
  virtual const std::vector<ValueMetadata>& outputs() const = 0;

  // Runs one inference. Every graph input without an initializer must be given; returns all graph outputs in
  // declaration order. Safe to call from several threads at once (runs of one session are serialized).
  // INVALID_ARGUMENT when an output is a sequence or optional value: use runValues() for such models.
  // SessionOptions::progress (creation's callback and token) plays no part in runs.
  Result<std::vector<NamedTensor>> run(const std::vector<NamedTensor>& inputs) { return run(inputs, RunOptions()); }
  // run() under `options`: only the outputs options.outputNames() asks for, in that order; CANCELLED when
  // options.setTerminate() is called before the run ends (the session stays usable); log lines carry the tag.
  virtual Result<std::vector<NamedTensor>> run(const std::vector<NamedTensor>& inputs, const RunOptions& options) = 0;
  // run() for models with sequence or optional inputs or outputs (tensor values work too): same rules, and each
  // input's kind must be the declared one (ValueMetadata::kind); an empty optional is Value::none().
  Result<std::vector<NamedValue>> runValues(const std::vector<NamedValue>& inputs) {
    return runValues(inputs, RunOptions());
  }
  // runValues() under `options`, with the same rules as run(inputs, options).
  virtual Result<std::vector<NamedValue>> runValues(const std::vector<NamedValue>& inputs, const RunOptions& options) = 0;

  // Runs one inference on `binding`'s inputs (host or device tensors, with run()'s rules) and leaves the outputs in
  // binding.outputs(), placed as bound. A device tensor of this session's device EP feeds its partitions without a
  // copy; any other device tensor is read back to host memory first (counted in transfers()).
  Status runWithBinding(IoBinding& binding) { return runWithBinding(binding, RunOptions()); }
  // runWithBinding() under `options` (its output names are ignored: the binding names the outputs).
  virtual Status runWithBinding(IoBinding& binding, const RunOptions& options) = 0;

  // Bytes copied between host memory and device memory by this session's runs since it was created: partition
  // inputs uploaded, partition outputs and device values read back (weights uploaded at creation are not counted).
  virtual TransferCounters transfers() const = 0;

  // Timing breakdown of session creation (and first_run_ms after the first run).
  virtual const SessionTimings& timings() const = 0;
  // Work done during session creation (glslang compiles, pipelines, cache hits).
  virtual const WorkCounters& counters() const = 0;
  // Every partition of every graph (compiled ones and runs of CPU-EP nodes), in partitionReport() order.
  virtual const std::vector<PartitionSummary>& partitions() const = 0;
  // How the nodes were assigned to execution providers, why EPs declined nodes, and the folded Constant nodes.
  virtual const PartitionReport& partitionReport() const = 0;
  // The node-by-node profile of the last run made with RunOptions::setProfiling(true) that succeeded (empty before
  // any); a copy, safe to take while another run goes on.
  virtual RunProfile lastRunProfile() const = 0;
};

}  // namespace kiln
