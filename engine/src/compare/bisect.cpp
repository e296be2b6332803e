// bisectModels (kiln/compare.h): intermediate values exposed as graph outputs a chunk at a time, both sides run on
// each variant, and the first node in topological order with a diverging output named.
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "compare/exposed_model.h"
#include "epcontext/epcontext_names.h"
#include "kiln/compare.h"
#include "onnx/model_writer.h"
#include "onnx/tensor_proto.h"

namespace kiln {
namespace {

using compare::SourceModel;

// A node whose outputs bisect exposes, with those outputs.
struct Candidate {
  const onnx::NodeProto* node = nullptr;
  std::vector<std::string> values;
  std::string graph = "main";  // the node's graph path
};

int64_t countSubgraphNodes(const onnx::GraphProto& graph) {
  int64_t count = 0;
  for (const auto& node : graph.node()) {
    for (const auto& attribute : node.attribute()) {
      if (attribute.has_g()) count += attribute.g().node_size() + countSubgraphNodes(attribute.g());
      for (const auto& g : attribute.graphs()) count += g.node_size() + countSubgraphNodes(g);
    }
  }
  return count;
}

// `node`'s typed outputs the reference model also computes, as a candidate (none when it has none).
void addCandidate(const onnx::NodeProto& node, const std::string& graph, const SourceModel& source,
                  const std::set<std::string>& referenceValues, std::vector<Candidate>& list, int64_t& skipped) {
  if (node.op_type() == "Constant" && node.domain().empty()) return;
  Candidate candidate{&node, {}, graph};
  for (const auto& out : node.output()) {
    if (out.empty()) continue;
    if (!source.types.count(out) || !referenceValues.count(out)) {
      ++skipped;
      continue;
    }
    candidate.values.push_back(out);
  }
  if (!candidate.values.empty()) list.push_back(std::move(candidate));
}

// The nodes of `graph` (path `graphPath`) in order, each exposable body's nodes (recursively) just before their
// owner, with their tensor outputs the reference model also has.
void addCandidates(const onnx::GraphProto& graph, const std::vector<int>& order, const std::string& graphPath,
                   const SourceModel& source, const std::set<std::string>& referenceValues,
                   std::vector<Candidate>& list, int64_t& skipped) {
  for (int index : order) {
    const auto& node = graph.node(index);
    for (const auto& attribute : node.attribute()) {
      if (!attribute.has_g()) continue;
      const onnx::GraphProto& body = attribute.g();
      const bool exposable = std::any_of(body.node().begin(), body.node().end(), [&](const onnx::NodeProto& n) {
        return n.output_size() > 0 && source.bodyValues.count(n.output(0));
      });
      if (!exposable) continue;
      std::vector<int> bodyOrder(static_cast<size_t>(body.node_size()));
      for (int i = 0; i < body.node_size(); ++i) bodyOrder[static_cast<size_t>(i)] = i;
      addCandidates(body, bodyOrder, graphPath + "/" + compare::nodeName(node) + "." + attribute.name(), source,
                    referenceValues, list, skipped);
    }
    addCandidate(node, graphPath, source, referenceValues, list, skipped);
  }
}

// The candidates of the whole model, in topological order.
std::vector<Candidate> candidates(const SourceModel& source, const SourceModel& reference, int64_t& skipped) {
  std::set<std::string> referenceValues;
  for (const auto& node : reference.proto.graph().node()) {
    for (const auto& out : node.output()) referenceValues.insert(out);
  }
  for (const auto& [name, where] : reference.bodyValues) referenceValues.insert(name);
  std::vector<Candidate> list;
  addCandidates(source.proto.graph(), source.topologicalOrder, "main", source, referenceValues, list, skipped);
  return list;
}

// True when `graph` holds an EPContext node (a compiled model: its values live in a context binary).
bool hasEpContextNode(const onnx::GraphProto& graph) {
  for (const auto& node : graph.node()) {
    if (node.op_type() == epctx::kOpType && node.domain() == epctx::kDomain) return true;
  }
  return false;
}

// `side` run on a variant of `model` whose outputs are `values`, written to `path`.
Result<std::vector<NamedTensor>> runExposed(const CompareSide& side, const SourceModel& model,
                                            const std::vector<std::string>& values, const std::string& path,
                                            const std::vector<NamedTensor>& inputs) {
  const compare::ExposedModel variant = compare::withOutputs(model, values);
  KILN_RETURN_IF_ERROR(onnx_io::saveModelFile(variant.proto, path));
  CompareSide exposed = side;
  exposed.modelPath = path;
  auto result = runSide(exposed, inputs);
  if (!result.isOk()) return result.status().withContext("running " + side.label + " with intermediate values exposed");
  for (auto& output : *result) {  // body values come back under their If/Loop output's name
    for (size_t i = 0; i < values.size(); ++i) {
      if (output.name == variant.outputNames[i]) output.name = values[i];
    }
  }
  return result;
}

Tensor findTensor(const std::vector<NamedTensor>& list, const std::string& name) {
  for (const auto& t : list) {
    if (t.name == name) return t.tensor;
  }
  return {};
}

// An initializer's or Constant node's tensor (undefined when `name` is neither).
Tensor weight(const SourceModel& model, const std::string& name) {
  const onnx::TensorProto* proto = compare::findWeight(model.proto.graph(), name);
  if (!proto) return {};
  auto tensor = onnx_io::tensorFromProto(*proto);
  return tensor.isOk() ? *tensor : Tensor();
}

// The node's inputs and outputs as compared: computed values from `compared`, graph inputs against themselves,
// weights (initializers, Constant nodes) of both models against each other.
NodeDivergence describeNode(const SourceModel& source, const SourceModel& reference, const onnx::NodeProto& node,
                            const std::map<std::string, TensorComparison>& compared,
                            const std::vector<NamedTensor>& inputs, const Tolerance& tolerance) {
  NodeDivergence divergence{compare::nodeName(node), node.op_type(), {}, {}};
  for (const auto& name : node.input()) {
    if (name.empty()) continue;
    if (auto it = compared.find(name); it != compared.end()) {
      divergence.inputs.push_back(it->second);
    } else if (Tensor given = findTensor(inputs, name); given.defined()) {
      divergence.inputs.push_back(compareTensors(name, given, given, tolerance));
    } else if (Tensor w = weight(source, name); w.defined()) {
      divergence.inputs.push_back(compareTensors(name, w, weight(reference, name), tolerance));
    } else {
      TensorComparison unknown;
      unknown.name = name;
      unknown.missing = true;
      divergence.inputs.push_back(unknown);
    }
  }
  for (const auto& name : node.output()) {
    if (auto it = compared.find(name); it != compared.end()) divergence.outputs.push_back(it->second);
  }
  return divergence;
}

}  // namespace

Result<BisectResult> bisectModels(const CompareSide& side, const CompareSide& reference,
                                  const std::vector<NamedTensor>& inputs, const Tolerance& tolerance,
                                  const BisectOptions& options) {
  KILN_ASSIGN_OR_RETURN(SourceModel source, compare::loadSourceModel(side.modelPath, inputs));
  std::error_code ignored;
  const bool sameModel = side.modelPath == reference.modelPath ||
                         std::filesystem::equivalent(side.modelPath, reference.modelPath, ignored);
  SourceModel referenceModel;
  if (!sameModel) {
    KILN_ASSIGN_OR_RETURN(referenceModel, compare::loadSourceModel(reference.modelPath, inputs));
  }
  const SourceModel& referenceSource = sameModel ? source : referenceModel;
  for (const CompareSide* which : {&side, &reference}) {
    const SourceModel& model = which == &side ? source : referenceSource;
    if (hasEpContextNode(model.proto.graph())) {
      return Status(StatusCode::NOT_IMPLEMENTED,
                    "'" + which->modelPath + "' is a compiled (EPContext) model: its intermediate values live in the "
                    "context binary, so bisect cannot expose them; compare it without bisecting, and bisect its source "
                    "model under the same execution providers");
    }
  }
  BisectResult result;
  result.nodesInSubgraphs = countSubgraphNodes(source.proto.graph()) - source.bodyNodesExposable;
  const std::vector<Candidate> list = candidates(source, referenceSource, result.valuesSkipped);
  if (list.empty()) {
    return Status(StatusCode::INVALID_ARGUMENT, "bisect found no intermediate value both models compute");
  }
  compare::TempFolder temp;
  KILN_RETURN_IF_ERROR(temp.create());
  const std::string sidePath = temp.path() + "/side.onnx", referencePath = temp.path() + "/reference.onnx";
  std::map<std::string, TensorComparison> compared;
  const onnx::NodeProto* firstDiverging = nullptr;
  for (size_t next = 0; next < list.size() && !(firstDiverging && options.stopAtFirstDivergence);) {
    if (options.progress.cancelled()) return Status(StatusCode::CANCELLED, "bisect cancelled");
    options.progress.report("bisect", static_cast<int64_t>(next), static_cast<int64_t>(list.size()));
    // One chunk: whole nodes, until the value count or the estimated bytes would pass their bounds.
    std::vector<std::string> values;
    std::vector<size_t> members;
    int64_t bytes = 0;
    while (next < list.size()) {
      int64_t nodeBytes = 0;
      for (const auto& v : list[next].values) nodeBytes += std::max<int64_t>(0, source.types.at(v).bytes);
      const bool full = static_cast<int64_t>(values.size() + list[next].values.size()) > options.maxValuesPerChunk ||
                        bytes + nodeBytes > options.maxChunkBytes;
      if (full && !values.empty()) break;
      values.insert(values.end(), list[next].values.begin(), list[next].values.end());
      members.push_back(next);
      bytes += nodeBytes;
      ++next;
    }
    ++result.chunks;
    std::vector<NamedTensor> sideValues, referenceValues;
    KILN_ASSIGN_OR_RETURN(sideValues, runExposed(side, source, values, sidePath, inputs));
    KILN_ASSIGN_OR_RETURN(referenceValues, runExposed(reference, referenceSource, values, referencePath, inputs));
    for (size_t member : members) {
      const auto& node = *list[member].node;
      NodeComparison nodeComparison{compare::nodeName(node), node.op_type(), list[member].graph, {}};
      for (const auto& v : list[member].values) {
        TensorComparison c = compareTensors(v, findTensor(sideValues, v), findTensor(referenceValues, v), tolerance);
        nodeComparison.outputs.push_back(c);
        compared.emplace(v, std::move(c));
        ++result.valuesCompared;
      }
      if (!nodeComparison.passed() && !firstDiverging) firstDiverging = list[member].node;
      result.nodes.push_back(std::move(nodeComparison));
    }
  }
  options.progress.report("bisect", static_cast<int64_t>(list.size()), static_cast<int64_t>(list.size()));
  if (firstDiverging) {
    result.firstDivergence = describeNode(source, referenceSource, *firstDiverging, compared, inputs, tolerance);
  }
  return result;
}

}  // namespace kiln
