// IoBinding: a run's inputs and where its outputs go, after ONNX Runtime's IoBinding. Its point is device-resident
// values: an output bound to DEVICE stays in the device memory of the execution provider that computed it (a device
// Tensor, tensor.h), and such a tensor bound as an input of the next run goes to that EP's partition without a copy,
// so a decoder's present key/values become the next step's past without crossing to host memory.
#pragma once

#include "kiln/export.h"

#include <string>
#include <utility>
#include <vector>

#include "kiln/tensor.h"
#include "kiln/value_metadata.h"

namespace kiln {

// Where a run leaves an output.
enum class OutputPlace {
  HOST,    // host memory (read back from the device when a device partition computed it)
  DEVICE,  // where it was computed: device memory for a device partition's output, host memory for a CPU node's
};

class KILN_EXPORT IoBinding {
 public:
  // Binds graph input `name` to `value`, a host tensor or a device tensor (an earlier run's output); binding a
  // name again replaces the value. The binding holds `value` (its storage) until cleared or replaced.
  void bindInput(const std::string& name, Tensor value);
  // Asks the next runs to return output `name`, placed as `place` says; binding a name again changes its place.
  // With no output bound, a run returns every graph output in host memory.
  void bindOutput(const std::string& name, OutputPlace place = OutputPlace::DEVICE);
  void clearBoundInputs() { inputs_.clear(); }
  void clearBoundOutputs() { outputPlaces_.clear(); }

  // The bound inputs, in the order first bound.
  const std::vector<NamedTensor>& inputs() const { return inputs_; }
  // The bound outputs and their places, in the order first bound.
  const std::vector<std::pair<std::string, OutputPlace>>& boundOutputs() const { return outputPlaces_; }
  // The last successful Session::runWithBinding's outputs: the bound ones in bound order (all graph outputs when
  // none is bound); each tensor's location() says where it is.
  const std::vector<NamedTensor>& outputs() const { return outputs_; }
  // Replaces outputs() (called by Session::runWithBinding).
  void setOutputs(std::vector<NamedTensor> outputs) { outputs_ = std::move(outputs); }

 private:
  std::vector<NamedTensor> inputs_;
  std::vector<std::pair<std::string, OutputPlace>> outputPlaces_;
  std::vector<NamedTensor> outputs_;
};

}  // namespace kiln
