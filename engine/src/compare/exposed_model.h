// What bisect and the reproducer do to a model: load it once, learn each value's element type and size for the
// actual inputs, and write variants whose graph outputs are chosen intermediate values, in a private temp folder.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kiln/status.h"
#include "kiln/value_metadata.h"

namespace kiln::compare {

// A tensor value's ONNX element type and its size in bytes for the actual inputs (-1 when unknown).
struct ValueType {
  int32_t elemType = 0;
  int64_t bytes = -1;
};

// Where a value computed inside an If or Loop body lives: the chain of (node index, body attribute) from the main
// graph down to its body. It is exposed through an extra output of each node of the chain, innermost first (If: the
// other branch yields an empty tensor; Loop: a scan output, the value of every iteration stacked).
struct BodyStep {
  int node = 0;           // index in the enclosing graph's node list
  std::string attribute;  // then_branch, else_branch or body
};
using BodyValue = std::vector<BodyStep>;

// A model parsed with external data inlined, and the types of its values for `inputs`.
struct SourceModel {
  onnx::ModelProto proto;
  std::map<std::string, ValueType> types;  // tensor values only (node outputs, graph inputs, initializers)
  std::vector<int> topologicalOrder;       // indices of proto.graph().node(), producers first
  std::map<std::string, BodyValue> bodyValues;  // typed outputs of the nodes of If/Loop bodies, at any depth
  int64_t bodyNodesExposable = 0;               // nodes of those bodies (Scan bodies, for one, are not exposed)
};

// A variant of a model whose graph outputs carry chosen values.
struct ExposedModel {
  onnx::ModelProto proto;
  std::vector<std::string> outputNames;  // the graph output carrying each requested value (same order)
};

// Loads `path` and infers every value's type and size with the graph inputs fixed to the shapes of `inputs`.
Result<SourceModel> loadSourceModel(const std::string& path, const std::vector<NamedTensor>& inputs);

// A copy of `source` whose graph outputs are exactly `values` (each typed from `types`); body values through extra
// outputs of their If/Loop nodes, named "kiln_exposed<depth>/<value>".
ExposedModel withOutputs(const SourceModel& source, const std::vector<std::string>& values);

// The weight named `name`: an initializer, or the tensor of the Constant node (value attribute) producing it, in
// `graph` or its bodies; nullptr when it is neither.
const onnx::TensorProto* findWeight(const onnx::GraphProto& graph, const std::string& name);

// The name a report gives a node: its own, or its first output's when it has none.
std::string nodeName(const onnx::NodeProto& node);

// A folder under the system temp folder, private to this user (0700), removed with everything in it on destruction.
class TempFolder {
 public:
  TempFolder() = default;
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  ~TempFolder();
  // Creates the folder; FAIL when it cannot.
  Status create();
  // The folder's path.
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace kiln::compare
