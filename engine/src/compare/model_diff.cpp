// kiln/model_diff.h: two models loaded as written and compared graph by graph, bodies of matched nodes included.
#include "kiln/model_diff.h"

#include <xxhash.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <utility>

#include "ir/attribute_text.h"
#include "ir/graph.h"
#include "ir/graph_paths.h"
#include "kiln/value.h"
#include "onnx/model_loader.h"

namespace kiln {
namespace {

// Strings longer than this, or with bytes that are not printable text, show their size and hash.
constexpr size_t kMaxStringChars = 96;

std::string hexHash(uint64_t hash) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

uint64_t stringHash(const std::string& text) { return XXH3_64bits(text.data(), text.size()); }

// XXH3-64 of a tensor's bytes; of each string's length and bytes for string tensors.
uint64_t tensorHash(const Tensor& tensor) {
  if (tensor.dtype() != DataType::STRING) {
    return tensor.rawData() ? XXH3_64bits(tensor.rawData(), tensor.byteSize()) : XXH3_64bits(nullptr, 0);
  }
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  const std::string* strings = tensor.strings();
  for (int64_t i = 0; strings && i < tensor.numel(); ++i) {
    const uint64_t size = strings[i].size();
    XXH3_64bits_update(state, &size, sizeof size);
    XXH3_64bits_update(state, strings[i].data(), strings[i].size());
  }
  const uint64_t hash = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  return hash;
}

// The shortest text that reads back as the same float: two different values never print alike.
std::string floatText(float value) {
  char text[32];
  const auto [end, error] = std::to_chars(text, text + sizeof text, value);
  return error == std::errc() ? std::string(text, end) : "?";
}

std::string stringText(const std::string& text) {
  if (text.size() <= kMaxStringChars && ir::isPrintableText(text)) return "\"" + text + "\"";
  return "<" + std::to_string(text.size()) + " bytes, xxh3 " + hexHash(stringHash(text)) + ">";
}

std::string tensorText(const Tensor& tensor) {
  return ir::tensorTypeText(tensor) + " xxh3 " + hexHash(tensorHash(tensor));
}

// A diff's attribute text: floats exact, long or binary strings and tensors by hash, so that two different values
// never print alike.
std::string attributeText(const ir::Attribute& attr) {
  static const ir::AttributeTextStyle kStyle{floatText, stringText, tensorText};
  return ir::attributeText(attr, kStyle, "(a type Kiln does not read)");
}

bool sameTensor(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && tensorHash(a) == tensorHash(b);
}

bool sameFloats(const std::vector<float>& a, const std::vector<float>& b) {
  // Bit for bit: NaN equals NaN, -0 differs from 0 (both change what a model computes or how it reads).
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

bool sameTensors(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!sameTensor(a[i], b[i])) return false;
  }
  return true;
}

// Equal values of the same type. Subgraph attributes are not compared here: their bodies are diffed as graphs.
bool sameValue(const ir::Attribute& a, const ir::Attribute& b) {
  if (a.type != b.type) return false;
  switch (a.type) {
    case ir::AttributeType::FLOAT: return sameFloats({a.f}, {b.f});
    case ir::AttributeType::INT: return a.i == b.i;
    case ir::AttributeType::STRING: return a.s == b.s;
    case ir::AttributeType::TENSOR: return sameTensor(a.t, b.t);
    case ir::AttributeType::FLOATS: return sameFloats(a.floats, b.floats);
    case ir::AttributeType::INTS: return a.ints == b.ints;
    case ir::AttributeType::STRINGS: return a.strings == b.strings;
    case ir::AttributeType::TENSORS: return sameTensors(a.tensors, b.tensors);
    case ir::AttributeType::GRAPH:
    case ir::AttributeType::GRAPHS:
    case ir::AttributeType::UNDEFINED:
    case ir::AttributeType::OTHER: return true;
  }
  return true;
}

bool holdsGraphs(const ir::Attribute& attr) {
  return attr.type == ir::AttributeType::GRAPH || attr.type == ir::AttributeType::GRAPHS;
}

// True when both attributes hold bodies that are diffed as graphs (one GRAPH each, or as many GRAPHS).
bool bothBodies(const ir::Attribute& a, const ir::Attribute& b) {
  if (a.type != b.type) return false;
  if (a.type == ir::AttributeType::GRAPH) return a.g && b.g;
  if (a.type != ir::AttributeType::GRAPHS || a.graphs.size() != b.graphs.size()) return false;
  for (size_t i = 0; i < a.graphs.size(); ++i) {
    if (!a.graphs[i] || !b.graphs[i]) return false;
  }
  return true;
}

std::string valueTypeText(const ir::ValueInfo& value) {
  std::string text = dataTypeName(value.dtype);
  if (!value.shape) {
    text += "[?]";
  } else {
    text += "[";
    for (size_t i = 0; i < value.shape->size(); ++i) {
      const Dimension& d = (*value.shape)[i];
      text += (i ? "," : "") + (d.isFixed() ? std::to_string(d.value) : (d.param.empty() ? "?" : d.param));
    }
    text += "]";
  }
  if (value.kind == ValueKind::TENSOR) return text;
  return std::string(valueKindName(value.kind)) + " of " + text;
}

// One diff of two graphs: the graph at `path` in A against its counterpart in B, bodies recursively.
class GraphDiffer {
 public:
  explicit GraphDiffer(ModelDiff& out) : out_(out) {}

  void diff(const ir::Graph& a, const ir::Graph& b, const std::string& path) {
    diffValues(a.inputs, b.inputs, path, out_.inputs);
    diffValues(a.outputs, b.outputs, path, out_.outputs);
    diffInitializers(a, b, path);
    diffNodes(a, b, path);
  }

 private:
  static void diffValues(const std::vector<ir::ValueInfo>& a, const std::vector<ir::ValueInfo>& b,
                         const std::string& path, std::vector<ValueDiff>& out) {
    std::map<std::string, const ir::ValueInfo*> inB;
    for (const auto& value : b) inB.emplace(value.name, &value);
    std::set<std::string> inA;
    for (const auto& value : a) {
      inA.insert(value.name);
      const auto found = inB.find(value.name);
      if (found == inB.end()) {
        out.push_back({path, value.name, DiffChange::REMOVED, valueTypeText(value), ""});
      } else if (valueTypeText(value) != valueTypeText(*found->second)) {
        out.push_back({path, value.name, DiffChange::CHANGED, valueTypeText(value), valueTypeText(*found->second)});
      }
    }
    for (const auto& value : b) {
      if (!inA.count(value.name)) out.push_back({path, value.name, DiffChange::ADDED, "", valueTypeText(value)});
    }
  }

  static InitializerDiff initializerSide(const std::string& path, const std::string& name, DiffChange change,
                                         const Tensor* a, const Tensor* b) {
    InitializerDiff d;
    d.graph = path;
    d.name = name;
    d.change = change;
    if (a) {
      d.typeA = ir::tensorTypeText(*a);
      d.hashA = tensorHash(*a);
      d.elements = a->numel();
    }
    if (b) {
      d.typeB = ir::tensorTypeText(*b);
      d.hashB = tensorHash(*b);
      d.elements = b->numel();
    }
    return d;
  }

  // Elements whose bytes differ, for two tensors of one fixed-size type and shape; -1 when not counted.
  static int64_t differingElements(const Tensor& a, const Tensor& b) {
    const size_t size = dataTypeSize(a.dtype());
    if (a.dtype() == DataType::STRING || size == 0 || !a.rawData() || !b.rawData()) return -1;
    const auto* x = static_cast<const std::byte*>(a.rawData());
    const auto* y = static_cast<const std::byte*>(b.rawData());
    int64_t count = 0;
    for (int64_t i = 0; i < a.numel(); ++i) count += std::memcmp(x + i * size, y + i * size, size) != 0;
    return count;
  }

  void diffInitializers(const ir::Graph& a, const ir::Graph& b, const std::string& path) {
    for (const auto& [name, tensor] : a.initializers) {
      const auto found = b.initializers.find(name);
      if (found == b.initializers.end()) {
        out_.initializers.push_back(initializerSide(path, name, DiffChange::REMOVED, &tensor, nullptr));
        continue;
      }
      InitializerDiff d = initializerSide(path, name, DiffChange::CHANGED, &tensor, &found->second);
      d.typeChanged = d.typeA != d.typeB;
      d.contentChanged = !d.typeChanged && d.hashA != d.hashB;
      if (d.contentChanged) d.differingElements = differingElements(tensor, found->second);
      if (d.typeChanged || d.contentChanged) out_.initializers.push_back(std::move(d));
    }
    for (const auto& [name, tensor] : b.initializers) {
      if (!a.initializers.count(name)) {
        out_.initializers.push_back(initializerSide(path, name, DiffChange::ADDED, nullptr, &tensor));
      }
    }
  }

  static NodeSide sideOf(const ir::Node& node) { return {node.opType, node.domain, node.inputs, node.outputs}; }

  // Pairs of node indices (A, B); -1 on the side without the node. Named nodes pair by name (the n-th node of a
  // name with the n-th of that name, should a model repeat one); unnamed nodes by their rank among the unnamed
  // nodes of the same op type and domain.
  static std::vector<std::pair<int, int>> matchNodes(const ir::Graph& a, const ir::Graph& b) {
    using Key = std::pair<std::string, std::string>;  // (name, "") or ("", domain + ":" + opType)
    auto keyOf = [](const ir::Node& n) {
      return n.name.empty() ? Key{"", n.domain + ":" + n.opType} : Key{n.name, ""};
    };
    std::map<Key, std::vector<int>> inB;
    for (size_t j = 0; j < b.nodes.size(); ++j) inB[keyOf(b.nodes[j])].push_back(static_cast<int>(j));
    std::map<Key, size_t> taken;
    std::vector<std::pair<int, int>> pairs;
    std::vector<bool> matchedB(b.nodes.size(), false);
    for (size_t i = 0; i < a.nodes.size(); ++i) {
      const Key key = keyOf(a.nodes[i]);
      const auto& candidates = inB[key];
      const size_t rank = taken[key]++;
      const int j = rank < candidates.size() ? candidates[rank] : -1;
      if (j >= 0) matchedB[static_cast<size_t>(j)] = true;
      pairs.emplace_back(static_cast<int>(i), j);
    }
    for (size_t j = 0; j < b.nodes.size(); ++j) {
      if (!matchedB[j]) pairs.emplace_back(-1, static_cast<int>(j));
    }
    return pairs;
  }

  void diffNodes(const ir::Graph& a, const ir::Graph& b, const std::string& path) {
    size_t byPosition = 0;
    for (const auto& [i, j] : matchNodes(a, b)) {
      if (i < 0 || j < 0) {
        const bool added = i < 0;
        const ir::Node& node = added ? b.nodes[static_cast<size_t>(j)] : a.nodes[static_cast<size_t>(i)];
        NodeDiff d;
        d.graph = path;
        d.name = ir::nodePathName(node, static_cast<size_t>(added ? j : i));
        d.change = added ? DiffChange::ADDED : DiffChange::REMOVED;
        d.unnamed = node.name.empty();
        (added ? d.b : d.a) = sideOf(node);
        out_.nodes.push_back(std::move(d));
        continue;
      }
      const ir::Node& nodeA = a.nodes[static_cast<size_t>(i)];
      byPosition += nodeA.name.empty();
      diffMatchedNode(nodeA, static_cast<size_t>(i), b.nodes[static_cast<size_t>(j)], path);
    }
    if (byPosition > 0) {
      out_.notes.push_back(path + ": " + std::to_string(byPosition) + " unnamed node" + (byPosition == 1 ? "" : "s") +
                           " matched by position and op type");
    }
  }

  void diffMatchedNode(const ir::Node& a, size_t indexA, const ir::Node& b, const std::string& path) {
    NodeDiff d;
    d.graph = path;
    d.name = ir::nodePathName(a, indexA);
    d.unnamed = a.name.empty();
    d.matchedByPosition = d.unnamed;
    d.a = sideOf(a);
    d.b = sideOf(b);
    d.opTypeChanged = a.opType != b.opType || a.domain != b.domain;
    d.inputsChanged = a.inputs != b.inputs;
    d.outputsChanged = a.outputs != b.outputs;
    d.attributes = diffAttributes(a, indexA, b, path);
    if (d.opTypeChanged || d.inputsChanged || d.outputsChanged || !d.attributes.empty()) {
      out_.nodes.push_back(std::move(d));
    }
  }

  // The attributes that differ; bodies held by both nodes are diffed as graphs instead (into out_).
  std::vector<AttributeDiff> diffAttributes(const ir::Node& a, size_t indexA, const ir::Node& b,
                                            const std::string& path) {
    std::vector<AttributeDiff> changed;
    for (const auto& [name, attrA] : a.attributes) {
      const ir::Attribute* attrB = b.attribute(name);
      if (!attrB) {
        changed.push_back({name, attributeText(attrA), ""});
      } else if (bothBodies(attrA, *attrB)) {
        diffBodies(attrA, *attrB, path + "/" + ir::nodePathName(a, indexA) + "." + name);
      } else if (holdsGraphs(attrA) ? attributeText(attrA) != attributeText(*attrB) : !sameValue(attrA, *attrB)) {
        // Graphs not diffed as bodies (a GRAPH against something else, GRAPHS of another count) differ as text.
        changed.push_back({name, attributeText(attrA), attributeText(*attrB)});
      }
    }
    for (const auto& [name, attrB] : b.attributes) {
      if (!a.hasAttribute(name)) changed.push_back({name, "", attributeText(attrB)});
    }
    std::sort(changed.begin(), changed.end(), [](const auto& x, const auto& y) { return x.name < y.name; });
    return changed;
  }

  void diffBodies(const ir::Attribute& a, const ir::Attribute& b, const std::string& bodyPath) {
    if (a.type == ir::AttributeType::GRAPH) {
      diff(*a.g, *b.g, bodyPath);
      return;
    }
    for (size_t k = 0; k < a.graphs.size(); ++k) {
      diff(*a.graphs[k], *b.graphs[k], bodyPath + "[" + std::to_string(k) + "]");
    }
  }

  ModelDiff& out_;
};

void diffOpsets(const ir::Model& a, const ir::Model& b, ModelDiff& out) {
  // "" and "ai.onnx" name the same domain.
  auto normalized = [](const ir::Model& m) {
    std::map<std::string, int64_t> opsets;
    for (const auto& [domain, version] : m.opsetImports) opsets[domain == "ai.onnx" ? "" : domain] = version;
    return opsets;
  };
  const auto opsetsA = normalized(a), opsetsB = normalized(b);
  std::set<std::string> domains;
  for (const auto& [domain, _] : opsetsA) domains.insert(domain);
  for (const auto& [domain, _] : opsetsB) domains.insert(domain);
  for (const auto& domain : domains) {
    const auto inA = opsetsA.find(domain), inB = opsetsB.find(domain);
    const int64_t versionA = inA == opsetsA.end() ? 0 : inA->second;
    const int64_t versionB = inB == opsetsB.end() ? 0 : inB->second;
    if (inA != opsetsA.end() && inB != opsetsB.end() && versionA == versionB) continue;
    const DiffChange change = inA == opsetsA.end()   ? DiffChange::ADDED
                              : inB == opsetsB.end() ? DiffChange::REMOVED
                                                     : DiffChange::CHANGED;
    out.opsets.push_back({domain, change, versionA, versionB});
  }
}

Result<ir::Model> loadAsWritten(const std::string& path) {
  onnx_io::LoadOptions options;
  options.runShapeInference = false;      // declared types only: inferred ones would differ with the inference
  options.inlineLocalFunctions = false;   // calls compared as written
  KILN_ASSIGN_OR_RETURN(onnx_io::LoadedModel loaded, onnx_io::loadModelFile(path, options));
  if (!loaded.model.graph) return Status(StatusCode::INVALID_GRAPH, "'" + path + "' has no graph");
  return std::move(loaded.model);
}

}  // namespace

const char* diffChangeName(DiffChange change) {
  switch (change) {
    case DiffChange::ADDED: return "added";
    case DiffChange::REMOVED: return "removed";
    case DiffChange::CHANGED: return "changed";
  }
  return "changed";
}

Result<ModelDiff> diffModels(const std::string& pathA, const std::string& pathB) {
  KILN_ASSIGN_OR_RETURN(const ir::Model modelA, loadAsWritten(pathA));
  KILN_ASSIGN_OR_RETURN(const ir::Model modelB, loadAsWritten(pathB));
  ModelDiff diff;
  diff.pathA = pathA;
  diff.pathB = pathB;
  diffOpsets(modelA, modelB, diff);
  GraphDiffer(diff).diff(*modelA.graph, *modelB.graph, ir::kMainGraphPath);
  return diff;
}

}  // namespace kiln
