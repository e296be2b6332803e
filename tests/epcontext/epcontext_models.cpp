#include "epcontext_models.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>

#include "model_builder.h"

namespace kiln::testing {
namespace {

constexpr int64_t kRows = 2, kCols = 8;

std::vector<float> wave(size_t n, float phase, float scale, float offset = 0.f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::sin(static_cast<float>(i) * 0.9f + phase) * scale + offset;
  return v;
}

// The ReverseSequence lengths, one per row (int64 [kRows], 16 bytes: below the API's 64-byte threshold).
onnx::TensorProto sequenceLengths(const std::string& name) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::INT64);
  t.add_dims(kRows);
  t.add_int64_data(kCols);
  t.add_int64_data(kCols - 3);
  return t;
}

// ReverseSequence over the columns of each row (batch_axis 0, time_axis 1): an op the Vulkan EP has no kernel
// for and will not get one (no model of interest uses it), so it stays a CPU-fallback node.
void addReverseSequence(GraphBuilder& g, const std::string& in, const std::string& out, const std::string& name) {
  auto& node = g.node("ReverseSequence", {in, "lens"}, {out}, name);
  attrInt(node, "batch_axis", 0);
  attrInt(node, "time_axis", 1);
}

// The Vulkan chain x, mask → Add → Mul(S) → Relu = `aux`, then Mod(M) and ReverseSequence(lens) on the CPU EP (`cpuOut`).
void addChain(GraphBuilder& g, const std::string& x, const std::string& mask, const std::string& aux,
              const std::string& cpuOut, const std::string& tag) {
  g.node("Add", {x, mask}, {tag + "sum"}, tag + "add_inputs");
  g.node("Mul", {tag + "sum", "S"}, {tag + "scaled"}, tag + "scale");
  g.node("Relu", {tag + "scaled"}, {aux}, tag + "relu");
  attrInt(g.node("Mod", {aux, "M"}, {tag + "mod"}, tag + "mod"), "fmod", 1);
  addReverseSequence(g, tag + "mod", cpuOut, tag + "reverse");
}

void addWeights(GraphBuilder& g, int variant, bool withA, bool withB, bool withLens) {
  const float v = static_cast<float>(variant);
  g.initializer("S", {1, kCols}, wave(kCols, 0.3f, 0.5f, 1.0f));  // the same in every variant (deduplicated)
  g.initializer("M", {kRows, kCols}, wave(kRows * kCols, 1.1f + v, 0.4f, 1.2f));  // in [0.8, 1.6]: no zero divisor
  if (withA) g.initializer("A", {kRows, kCols}, wave(kRows * kCols, 2.0f + v, 0.7f));
  if (withB) g.initializer("B", {kRows, kCols}, wave(kRows * kCols, 0.6f + v, 0.3f));
  if (withLens) *g.proto().add_initializer() = sequenceLengths("lens");
}

void declareIo(GraphBuilder& g, bool withCond) {
  // Declared mask before x and y before aux: the nodes use them the other way round.
  g.input("mask", {kRows, kCols}).input("x", {kRows, kCols});
  if (withCond) g.input("cond", {}, onnx::TensorProto::BOOL);
  g.output("y", {kRows, kCols}).output("aux", {kRows, kCols});
}

onnx::ModelProto buildModel(Topology topology, int variant) {
  ModelBuilder m(13);
  switch (topology) {
    case Topology::kOnePartition: {
      declareIo(m, false);
      addWeights(m, variant, true, false, true);
      m.node("Add", {"x", "mask"}, {"sum0"}, "add_mask");
      m.node("Add", {"sum0", "A"}, {"x1"}, "add_a");
      m.node("Mul", {"x1", "S"}, {"scaled"}, "scale");
      m.node("Relu", {"scaled"}, {"aux"}, "relu");
      attrInt(m.node("Mod", {"aux", "M"}, {"mod"}, "mod"), "fmod", 1);
      addReverseSequence(m, "mod", "y", "reverse");
      break;
    }
    case Topology::kTwoPartitions: {
      declareIo(m, false);
      addWeights(m, variant, false, true, true);
      addChain(m, "x", "mask", "aux", "cpu_out", "");
      m.node("Add", {"cpu_out", "B"}, {"biased"}, "add_b");
      m.node("Sigmoid", {"biased"}, {"y"}, "sigmoid");
      break;
    }
    case Topology::kIfBody: {
      declareIo(m, true);
      // M is read from the then-branch (outer scope) by a CPU-fallback node. The Vulkan nodes read body
      // initializers only: the Vulkan EP declines a node whose input is an outer-scope initializer (its type is
      // unknown inside the body), which would split the partitions differently.
      addWeights(m, variant, false, false, false);
      auto& mainInits = *m.proto().mutable_initializer();
      mainInits.erase(std::remove_if(mainInits.begin(), mainInits.end(), [](const onnx::TensorProto& t) { return t.name() == "S"; }),
                      mainInits.end());
      GraphBuilder thenBranch("then"), elseBranch("else");
      addWeights(thenBranch, variant, false, true, true);
      auto& inits = *thenBranch.proto().mutable_initializer();
      inits.erase(std::remove_if(inits.begin(), inits.end(), [](const onnx::TensorProto& t) { return t.name() == "M"; }),
                  inits.end());
      addChain(thenBranch, "x", "mask", "then_aux", "then_cpu", "then_");
      thenBranch.node("Add", {"then_cpu", "B"}, {"then_biased"}, "then_add_b");
      thenBranch.node("Sigmoid", {"then_biased"}, {"then_y"}, "then_sigmoid");
      thenBranch.output("then_y").output("then_aux");
      elseBranch.node("Sub", {"x", "mask"}, {"else_diff"}, "else_sub");
      elseBranch.node("Tanh", {"else_diff"}, {"else_aux"}, "else_tanh");
      elseBranch.node("Neg", {"else_aux"}, {"else_y"}, "else_neg");
      elseBranch.output("else_y").output("else_aux");
      auto& branch = m.node("If", {"cond"}, {"y", "aux"}, "branch");
      attrGraph(branch, "then_branch", thenBranch.proto());
      attrGraph(branch, "else_branch", elseBranch.proto());
      break;
    }
  }
  return m.build();
}

std::string rawBytes(const onnx::TensorProto& t) {
  if (t.data_type() == onnx::TensorProto::FLOAT) {
    return std::string(reinterpret_cast<const char*>(t.float_data().data()), t.float_data_size() * sizeof(float));
  }
  return std::string(reinterpret_cast<const char*>(t.int64_data().data()), t.int64_data_size() * sizeof(int64_t));
}

void makeExternal(onnx::ModelProto& model, const std::string& location, const std::string& dataPath) {
  std::string data;
  for (auto& t : *model.mutable_graph()->mutable_initializer()) {
    const std::string bytes = rawBytes(t);
    while (data.size() % 16) data.push_back('\0');  // aligned offsets, as exporters write them
    const size_t offset = data.size();
    data += bytes;
    t.clear_float_data();
    t.clear_int64_data();
    t.set_data_location(onnx::TensorProto::EXTERNAL);
    auto add = [&](const char* key, const std::string& value) {
      auto* entry = t.add_external_data();
      entry->set_key(key);
      entry->set_value(value);
    };
    add("location", location);
    add("offset", std::to_string(offset));
    add("length", std::to_string(bytes.size()));
  }
  std::ofstream(dataPath, std::ios::binary).write(data.data(), static_cast<std::streamsize>(data.size()));
}

}  // namespace

const char* topologyName(Topology topology) {
  switch (topology) {
    case Topology::kOnePartition: return "one";
    case Topology::kTwoPartitions: return "two";
    case Topology::kIfBody: return "ifbody";
  }
  return "?";
}

int expectedPartitions(Topology topology) { return topology == Topology::kOnePartition ? 1 : topology == Topology::kTwoPartitions ? 2 : 3; }

std::set<std::string> vulkanInitializers(Topology topology) {
  switch (topology) {
    case Topology::kOnePartition: return {"A", "S"};
    case Topology::kTwoPartitions: return {"B", "S"};
    case Topology::kIfBody: return {"B", "S"};
  }
  return {};
}

std::set<std::string> cpuInitializers(Topology topology) { return {"M", "lens"}; }

SourceModel writeSourceModel(Topology topology, const std::string& folder, const std::string& name, int variant,
                             bool externalData) {
  SourceModel source;
  source.path = folder + "/" + name + ".onnx";
  source.proto = buildModel(topology, variant);
  if (externalData) {
    source.dataFile = folder + "/" + name + "_weights.bin";
    makeExternal(source.proto, name + "_weights.bin", source.dataFile);
  }
  std::ofstream(source.path, std::ios::binary) << source.proto.SerializeAsString();
  return source;
}

std::vector<std::vector<NamedTensor>> inputSets(Topology topology) {
  auto tensor = [](float phase, float scale) {
    return Tensor::fromVector<float>({kRows, kCols}, wave(kRows * kCols, phase, scale));
  };
  std::vector<NamedTensor> common = {{"x", tensor(0.2f, 2.5f)}, {"mask", tensor(1.7f, 0.8f)}};
  if (topology != Topology::kIfBody) return {common};
  auto withCond = [&](bool cond) {
    auto inputs = common;
    inputs.push_back({"cond", Tensor::fromVector<bool>({}, {cond})});
    return inputs;
  };
  return {withCond(true), withCond(false)};
}

}  // namespace kiln::testing
