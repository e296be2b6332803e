// A small builder for ONNX models in tests: graphs, nodes with attributes, initializers and If bodies.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::testing {

// Builds an onnx::GraphProto; ModelBuilder wraps one as the main graph.
class GraphBuilder {
 public:
  explicit GraphBuilder(std::string name = "graph");

  // A float tensor input/output (empty dims = shape left unspecified, {-1} entries = symbolic "N").
  GraphBuilder& input(const std::string& name, const std::vector<int64_t>& dims,
                      int32_t elemType = onnx::TensorProto::FLOAT);
  GraphBuilder& output(const std::string& name, const std::vector<int64_t>& dims = {},
                       int32_t elemType = onnx::TensorProto::FLOAT);
  GraphBuilder& initializer(const std::string& name, const std::vector<int64_t>& dims,
                            const std::vector<float>& values);
  // Adds a node; set attributes on the returned proto with the attr* helpers.
  onnx::NodeProto& node(const std::string& opType, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "");
  // A Constant node producing a float tensor.
  onnx::NodeProto& constant(const std::string& output, const std::vector<int64_t>& dims,
                            const std::vector<float>& values, const std::string& name = "");

  onnx::GraphProto& proto() { return graph_; }
  const onnx::GraphProto& proto() const { return graph_; }

 private:
  onnx::GraphProto graph_;
};

class ModelBuilder : public GraphBuilder {
 public:
  explicit ModelBuilder(int64_t opset = 13) : GraphBuilder("main"), opset_(opset) {}
  ModelBuilder& opsetImport(const std::string& domain, int64_t version);
  onnx::ModelProto build() const;
  // Serializes the model to `path` and returns the path.
  std::string save(const std::string& path) const;

 private:
  int64_t opset_;
  std::vector<std::pair<std::string, int64_t>> extraOpsets_;
};

onnx::TensorProto floatTensor(const std::string& name, const std::vector<int64_t>& dims,
                              const std::vector<float>& values);
// Adds an initializer of ONNX element type `type` (FLOAT, INT64, else stored as int32_data: INT32 and the
// 8-bit types) to `graph`, holding `values` converted to it.
void initializer(GraphBuilder& graph, const std::string& name, const std::vector<int64_t>& dims, int32_t type,
                 const std::vector<double>& values);
// Adds a FLOAT or FLOAT16 initializer (float16 stored as its bits, in int32_data) holding `values`.
void initializer(GraphBuilder& graph, const std::string& name, const std::vector<int64_t>& dims,
                 const std::vector<float>& values, int32_t type);
void attrInt(onnx::NodeProto& node, const std::string& name, int64_t value);
void attrInts(onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& values);
void attrFloat(onnx::NodeProto& node, const std::string& name, float value);
void attrString(onnx::NodeProto& node, const std::string& name, const std::string& value);
void attrTensor(onnx::NodeProto& node, const std::string& name, const onnx::TensorProto& value);
void attrGraph(onnx::NodeProto& node, const std::string& name, const onnx::GraphProto& value);

}  // namespace kiln::testing
