// Random valid ONNX graphs for differential testing, valid by construction: every value's element type, shape and a
// bound on its magnitude are known while the graph is built, so each op is drawn only where its inputs suit it and
// its attributes are drawn from their valid ranges. No shape inference and no rejection after the fact.
//
// What a value records decides which ops may read it:
// - `bound`: |x| <= bound for every element, so Exp, Pow and products are only drawn where they stay finite;
// - `exact`: the value comes from the graph inputs through ops every correct implementation computes bit for bit
//   (moves, Max, Relu, comparisons...), so discontinuous ops (Floor, Round, ArgMax, comparisons, Cast to integers)
//   may read it: on a rounded value a one-ulp difference would flip their result, which is no bug;
// - `slack`: the absolute difference two correct implementations may show (quantization steps, float16 rounding),
//   carried forward so that the comparison allows it.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "kiln/tensor.h"
#include "kiln/value_metadata.h"
#include "model_builder.h"

namespace kiln::difftest {

struct GenValue {
  std::string name;
  int32_t type = onnx::TensorProto::FLOAT;
  std::vector<int64_t> dims;
  double bound = 1;
  bool exact = false;
  double slack = 0;

  int rank() const { return static_cast<int>(dims.size()); }
  int64_t numel() const;
  bool isFloat() const { return type == onnx::TensorProto::FLOAT; }
};

// The builder state an op maker works on: the graph, the values it may read and the random source.
class GraphGenerator {
 public:
  GraphGenerator(uint64_t seed, testing::GraphBuilder& graph);

  // Random draws.
  int64_t uniformInt(int64_t lo, int64_t hi);  // inclusive
  double uniform(double lo, double hi);
  bool chance(double p);
  template <typename T>
  const T& pick(const std::vector<T>& items) {
    return items[static_cast<size_t>(uniformInt(0, static_cast<int64_t>(items.size()) - 1))];
  }
  std::mt19937_64& rng() { return rng_; }

  // A name not used before, starting with `prefix`.
  std::string fresh(const std::string& prefix);
  // A random value `accept` takes (preferring recent ones, so graphs grow deep), or nothing when none does.
  std::optional<GenValue> pickValue(const std::function<bool(const GenValue&)>& accept);
  // Makes `value` readable by later ops (a node output or a graph input).
  void addValue(GenValue value);
  const std::vector<GenValue>& values() const { return values_; }

  // Initializers.
  std::string floatConst(const std::vector<int64_t>& dims, const std::vector<float>& values);
  std::string randomFloatConst(const std::vector<int64_t>& dims, double lo, double hi);
  std::string int64Const(const std::vector<int64_t>& dims, const std::vector<int64_t>& values);
  std::string typedConst(int32_t type, const std::vector<int64_t>& dims, const std::vector<double>& values);

  // A node whose outputs are fresh names; returns the node (for attributes).
  onnx::NodeProto& node(const std::string& opType, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs);
  // A float value with every element >= 0.5 made from `x` (Abs then Add 0.5): the input Log, Sqrt, Div and Pow need.
  GenValue positive(const GenValue& x);

  testing::GraphBuilder& graph() { return *graph_; }
  int nodeCount() const { return graph_->proto().node_size(); }

 private:
  std::mt19937_64 rng_;
  testing::GraphBuilder* graph_;
  std::vector<GenValue> values_;
  int counter_ = 0;
};

// Adds one node (or a few) of its kind reading values of `gen`; false, having added nothing, when no value suits.
using OpMaker = std::function<bool(GraphGenerator& gen)>;

struct OpKind {
  std::string name;  // the op it is about ("Conv", "If", "QDQ"...)
  OpMaker make;
};

// Every kind of op the generator draws, from ops_elementwise.cpp, ops_shape.cpp and ops_nn.cpp.
std::vector<OpKind> elementwiseOps();
std::vector<OpKind> shapeOps();
std::vector<OpKind> nnOps();
const std::vector<OpKind>& allOps();

// A generated test case: the model, random inputs for its graph inputs, the tolerance slack of each output and the
// op kinds drawn.
struct GeneratedCase {
  onnx::ModelProto model;
  std::vector<NamedTensor> inputs;
  std::vector<std::string> outputNames;
  std::vector<double> outputSlack;
  std::vector<std::string> opKinds;
  // One line per value as the generator sees it (name, type, dims, bound, exact, slack): written beside the model
  // as values.txt, so that a case can be read without tools.
  std::string valueListing;
};

struct GeneratorOptions {
  int minNodes = 2, maxNodes = 10;
  int64_t opset = 17;
  std::vector<std::string> onlyOps;  // when not empty, draw only these kinds
};

// The case of `seed`: the same seed gives the same case on every machine (std::mt19937_64, own distributions).
GeneratedCase generateCase(uint64_t seed, const GeneratorOptions& options = {});

// Broadcast helpers for op makers.
std::vector<int64_t> broadcastShape(const std::vector<int64_t>& a, const std::vector<int64_t>& b);
bool broadcastable(const std::vector<int64_t>& a, const std::vector<int64_t>& b);

}  // namespace kiln::difftest
