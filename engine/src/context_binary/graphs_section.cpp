#include "context_binary/graphs_section.h"

#include <xxhash.h>

#include <algorithm>
#include <set>

namespace kiln::ctxbin {
namespace {

Status corrupt(const std::string& why) { return Status(StatusCode::INVALID_GRAPH, "corrupt context binary: " + why); }

void writeStrings(const std::vector<std::string>& values, ByteWriter& w) {
  w.u32(static_cast<uint32_t>(values.size()));
  for (const auto& v : values) w.str(v);
}

std::vector<std::string> readStrings(ByteReader& r) {
  std::vector<std::string> values(r.count(4));
  for (auto& v : values) v = r.str();
  return values;
}

void writeInlineTensor(const Tensor& t, ByteWriter& w) {
  writeTensorType(t, w);
  const auto bytes = tensorBytes(t);
  w.u64(bytes.size());
  w.bytes(bytes.data(), bytes.size());
}

Result<Tensor> readInlineTensor(ByteReader& r) {
  KILN_ASSIGN_OR_RETURN(auto type, readTensorType(r));
  const uint64_t size = r.u64();
  auto bytes = r.bytes(size);
  if (!r.ok()) return corrupt("inline tensor runs past the graphs section");
  return tensorFromBytes(type.first, type.second, bytes);
}

Status writeAttribute(const ir::Attribute& a, ByteWriter& w) {
  using T = ir::AttributeType;
  w.str(a.name);
  w.u8(static_cast<uint8_t>(a.type));
  switch (a.type) {
    case T::FLOAT: w.f32(a.f); break;
    case T::INT: w.i64(a.i); break;
    case T::STRING: w.str(a.s); break;
    case T::TENSOR: writeInlineTensor(a.t, w); break;
    case T::FLOATS:
      w.u32(static_cast<uint32_t>(a.floats.size()));
      for (float v : a.floats) w.f32(v);
      break;
    case T::INTS:
      w.u32(static_cast<uint32_t>(a.ints.size()));
      for (int64_t v : a.ints) w.i64(v);
      break;
    case T::STRINGS: writeStrings(a.strings, w); break;
    case T::TENSORS:
      w.u32(static_cast<uint32_t>(a.tensors.size()));
      for (const auto& t : a.tensors) writeInlineTensor(t, w);
      break;
    default:
      return Status(StatusCode::INVALID_ARGUMENT, "attribute '" + a.name + "' of a compiled node cannot be stored");
  }
  return Status::ok();
}

Result<ir::Attribute> readAttribute(ByteReader& r) {
  using T = ir::AttributeType;
  ir::Attribute a;
  a.name = r.str();
  a.type = static_cast<T>(r.u8());
  switch (a.type) {
    case T::FLOAT: a.f = r.f32(); break;
    case T::INT: a.i = r.i64(); break;
    case T::STRING: a.s = r.str(); break;
    case T::TENSOR: { KILN_ASSIGN_OR_RETURN(a.t, readInlineTensor(r)); break; }
    case T::FLOATS:
      a.floats.resize(r.count(4));
      for (float& v : a.floats) v = r.f32();
      break;
    case T::INTS:
      a.ints.resize(r.count(8));
      for (int64_t& v : a.ints) v = r.i64();
      break;
    case T::STRINGS: a.strings = readStrings(r); break;
    case T::TENSORS: {
      const uint32_t n = r.count(16);
      for (uint32_t i = 0; i < n; ++i) {
        KILN_ASSIGN_OR_RETURN(Tensor t, readInlineTensor(r));
        a.tensors.push_back(std::move(t));
      }
      break;
    }
    default: return corrupt("attribute '" + a.name + "' has an unknown type");
  }
  if (!r.ok()) return corrupt("attribute '" + a.name + "' runs past the graphs section");
  return a;
}

void writeValueInfo(const ir::ValueInfo& v, ByteWriter& w) {
  w.str(v.name);
  w.u8(static_cast<uint8_t>(v.kind));
  w.i32(static_cast<int32_t>(v.dtype));
  w.u8(v.shape ? 1 : 0);
  if (!v.shape) return;
  w.u32(static_cast<uint32_t>(v.shape->size()));
  for (const auto& d : *v.shape) {
    w.u8(d.isFixed() ? 1 : 0);
    if (d.isFixed()) {
      w.i64(d.value);
    } else {
      w.str(d.param);
    }
  }
}

Result<ir::ValueInfo> readValueInfo(ByteReader& r) {
  ir::ValueInfo v;
  v.name = r.str();
  const uint8_t kind = r.u8();
  const int32_t dtype = r.i32();
  if (kind > static_cast<uint8_t>(ir::ValueKind::UNKNOWN) || dtype < 0 || dtype > 16) {
    return corrupt("value '" + v.name + "' has an unknown kind or type");
  }
  v.kind = static_cast<ir::ValueKind>(kind);
  v.dtype = static_cast<DataType>(dtype);
  if (r.u8()) {
    std::vector<Dimension> dims(r.count(5));
    for (auto& d : dims) {
      if (r.u8()) {
        d.value = r.i64();
      } else {
        d.value = -1;
        d.param = r.str();
      }
    }
    v.shape = std::move(dims);
  }
  if (!r.ok()) return corrupt("value '" + v.name + "' runs past the graphs section");
  return v;
}

Status writePartition(const CompiledPartition& p, WeightTableWriter& weights, SpirvTableWriter& spirv, ByteWriter& w) {
  const ir::Graph& g = *p.graph;
  w.str(p.name);
  w.str(p.executionProvider);
  writeStrings(p.inputs, w);
  writeStrings(p.outputs, w);
  w.u32(static_cast<uint32_t>(p.opsets.size()));
  for (const auto& [domain, version] : p.opsets) {
    w.str(domain);
    w.i64(version);
  }
  w.u32(static_cast<uint32_t>(g.nodes.size()));
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const ir::Node& n = g.nodes[i];
    w.str(n.name);
    w.str(n.opType);
    w.str(n.domain);
    writeStrings(n.inputs, w);
    writeStrings(n.outputs, w);
    w.u32(static_cast<uint32_t>(n.attributes.size()));
    for (const auto& [key, attribute] : n.attributes) {
      KILN_RETURN_IF_ERROR(writeAttribute(attribute, w).withContext("storing node " + n.label()));
    }
    const CompiledNode* stored = i < p.nodes.size() ? &p.nodes[i] : nullptr;
    w.u8(stored && stored->onHost ? 1 : 0);
    w.u32(stored ? static_cast<uint32_t>(stored->constants.size()) : 0);
    if (stored) {
      for (const auto& c : stored->constants) KILN_RETURN_IF_ERROR(weights.writeConstant(c, w));
    }
  }
  w.u32(static_cast<uint32_t>(g.inputs.size()));
  for (const auto& v : g.inputs) writeValueInfo(v, w);
  w.u32(static_cast<uint32_t>(g.outputs.size()));
  for (const auto& v : g.outputs) writeValueInfo(v, w);
  w.u32(static_cast<uint32_t>(g.valueInfo.size()));
  for (const auto& [name, v] : g.valueInfo) writeValueInfo(v, w);
  // Values some reader needs: every input a kernel did not fold into its constants, and the outputs.
  std::set<std::string> needed(p.outputs.begin(), p.outputs.end());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const auto* absorbed = i < p.nodes.size() ? &p.nodes[i].absorbedInputs : nullptr;
    for (size_t k = 0; k < g.nodes[i].inputs.size(); ++k) {
      if (!absorbed || std::find(absorbed->begin(), absorbed->end(), k) == absorbed->end()) needed.insert(g.nodes[i].inputs[k]);
    }
  }
  w.u32(static_cast<uint32_t>(g.initializers.size()));
  for (const auto& [name, t] : g.initializers) {
    w.str(name);
    // A shape-only tensor (read back from a binary, so absorbedInputs is not known) stays shape-only.
    // An initializer whose bytes stayed in their external-data file is read from there.
    const FileRange* external = weights.externalFor(name, t);
    const bool hasData = t.dtype() == DataType::STRING || t.rawData() != nullptr || t.numel() == 0 || external;
    // Weightless: absorbed weights too, as source references: kernels derive their constants from them at load.
    if (hasData && (needed.count(name) || t.dtype() == DataType::STRING || weights.weightless())) {
      KILN_RETURN_IF_ERROR(external ? weights.writeReference(t, *external, w) : weights.writeReference(t, w));
    } else {
      weights.writeShapeOnly(t, w);  // folded into prepacked constants: stored once, packed
    }
  }
  w.u32(static_cast<uint32_t>(p.spirv.size()));
  for (const auto& [key, words] : p.spirv) w.u32(spirv.add(key, words));
  w.str(p.targetProfile);
  return Status::ok();
}

Result<CompiledPartition> readPartition(ByteReader& r, const WeightTableReader& weights,
                                        const std::vector<std::pair<std::string, std::vector<uint32_t>>>& spirv) {
  CompiledPartition p;
  auto graph = std::make_shared<ir::Graph>();
  p.name = r.str();
  graph->name = p.name;
  p.executionProvider = r.str();
  p.inputs = readStrings(r);
  p.outputs = readStrings(r);
  const uint32_t opsets = r.count(12);
  for (uint32_t i = 0; i < opsets; ++i) {
    std::string domain = r.str();
    p.opsets[domain] = r.i64();
  }
  const uint32_t nodes = r.count(21);
  const std::string where = "partition '" + p.name + "'";
  for (uint32_t i = 0; i < nodes && r.ok(); ++i) {
    ir::Node n;
    n.name = r.str();
    n.opType = r.str();
    n.domain = r.str();
    n.inputs = readStrings(r);
    n.outputs = readStrings(r);
    const uint32_t attributes = r.count(5);
    for (uint32_t a = 0; a < attributes; ++a) {
      KILN_ASSIGN_OR_RETURN(ir::Attribute attribute, readAttribute(r));
      n.attributes[attribute.name] = std::move(attribute);
    }
    CompiledNode stored;
    stored.onHost = r.u8() != 0;
    const uint32_t constants = r.count(12);
    for (uint32_t c = 0; c < constants; ++c) {
      KILN_ASSIGN_OR_RETURN(Tensor t, weights.readReference(r));
      stored.constants.push_back(std::move(t));
    }
    graph->nodes.push_back(std::move(n));
    p.nodes.push_back(std::move(stored));
  }
  for (auto* list : {&graph->inputs, &graph->outputs}) {
    const uint32_t count = r.count(10);
    for (uint32_t i = 0; i < count; ++i) {
      KILN_ASSIGN_OR_RETURN(ir::ValueInfo v, readValueInfo(r));
      list->push_back(std::move(v));
    }
  }
  const uint32_t infos = r.count(10);
  for (uint32_t i = 0; i < infos; ++i) {
    KILN_ASSIGN_OR_RETURN(ir::ValueInfo v, readValueInfo(r));
    graph->valueInfo[v.name] = v;
  }
  const uint32_t initializers = r.count(16);
  for (uint32_t i = 0; i < initializers; ++i) {
    std::string name = r.str();
    KILN_ASSIGN_OR_RETURN(Tensor t, weights.readReference(r));
    graph->initializers[name] = std::move(t);
  }
  const uint32_t modules = r.count(4);
  for (uint32_t i = 0; i < modules; ++i) {
    const uint32_t index = r.u32();
    if (!r.ok() || index >= spirv.size()) return corrupt(where + " names a SPIR-V module that does not exist");
    p.spirv[spirv[index].first] = spirv[index].second;
  }
  p.targetProfile = r.str();
  if (!r.ok()) return corrupt(where + " runs past the graphs section");
  p.graph = std::move(graph);
  return p;
}

}  // namespace

uint32_t SpirvTableWriter::add(const std::string& key, const std::vector<uint32_t>& words) {
  auto [it, inserted] = index_.emplace(key, static_cast<uint32_t>(modules_.size()));
  if (inserted) modules_.emplace_back(key, words);
  return it->second;
}

std::vector<std::byte> SpirvTableWriter::encode() const {
  ByteWriter w;
  w.u32(static_cast<uint32_t>(modules_.size()));
  for (const auto& [key, words] : modules_) {
    w.str(key);
    w.u32(static_cast<uint32_t>(words.size()));
    w.bytes(words.data(), words.size() * 4);
  }
  return w.take();
}

std::vector<std::byte> SpirvTableWriter::encodeDigests() const {
  ByteWriter w;
  w.u32(static_cast<uint32_t>(modules_.size()));
  for (const auto& [key, words] : modules_) w.u64(spirvDigest(key, words));
  return w.take();
}

uint64_t spirvDigest(const std::string& key, std::span<const uint32_t> words) {
  return XXH3_64bits_withSeed(words.data(), words.size_bytes(), XXH3_64bits(key.data(), key.size()));
}

Status checkSpirvDigests(const std::vector<std::pair<std::string, std::vector<uint32_t>>>& modules,
                         std::span<const std::byte> digests) {
  ByteReader r(digests);
  const uint32_t count = r.count(8);
  if (!r.ok() || count != modules.size()) {
    return corrupt("the spirv_digests section lists " + std::to_string(count) + " digests for " +
                   std::to_string(modules.size()) + " SPIR-V modules");
  }
  for (const auto& [key, words] : modules) {
    const uint64_t recorded = r.u64();
    if (!r.ok()) break;
    if (recorded != spirvDigest(key, words)) return corrupt("SPIR-V module '" + key + "' does not match its digest");
  }
  if (!r.ok() || r.left() != 0) return corrupt("spirv_digests section does not parse");
  return Status::ok();
}

Result<std::vector<std::pair<std::string, std::vector<uint32_t>>>> decodeSpirvSection(std::span<const std::byte> section) {
  ByteReader r(section);
  std::vector<std::pair<std::string, std::vector<uint32_t>>> modules;
  const uint32_t count = r.count(8);
  for (uint32_t i = 0; i < count && r.ok(); ++i) {
    std::string key = r.str();
    const uint32_t words = r.count(4);
    auto bytes = r.bytes(static_cast<size_t>(words) * 4);
    if (!r.ok()) break;
    // No SPIR-V module is empty (its header alone is 5 words); the writer never stores one.
    if (words == 0) return corrupt("SPIR-V module '" + key + "' is empty");
    std::vector<uint32_t> module(words);
    std::memcpy(module.data(), bytes.data(), bytes.size());
    modules.emplace_back(std::move(key), std::move(module));
  }
  if (!r.ok() || r.left() != 0) return corrupt("SPIR-V section does not parse");
  return modules;
}

Result<std::vector<std::byte>> encodeGraphs(const std::vector<CompiledPartition>& partitions, WeightTableWriter& weights,
                                            SpirvTableWriter& spirv) {
  ByteWriter w;
  w.u32(static_cast<uint32_t>(partitions.size()));
  for (const auto& p : partitions) KILN_RETURN_IF_ERROR(writePartition(p, weights, spirv, w));
  return w.take();
}

Result<std::vector<CompiledPartition>> decodeGraphs(
    std::span<const std::byte> section, const WeightTableReader& weights,
    const std::vector<std::pair<std::string, std::vector<uint32_t>>>& spirv) {
  ByteReader r(section);
  std::vector<CompiledPartition> partitions;
  const uint32_t count = r.count(32);
  for (uint32_t i = 0; i < count; ++i) {
    KILN_ASSIGN_OR_RETURN(CompiledPartition p, readPartition(r, weights, spirv));
    partitions.push_back(std::move(p));
  }
  if (!r.ok() || r.left() != 0) return corrupt("graphs section does not parse");
  return partitions;
}

Result<std::string> firstPartitionProvider(std::span<const std::byte> section) {
  ByteReader r(section);
  const uint32_t count = r.count(32);
  r.str();  // the partition's name
  std::string provider = r.str();
  if (!r.ok() || count == 0 || provider.empty()) return corrupt("the graphs section names no execution provider");
  return provider;
}

}  // namespace kiln::ctxbin
