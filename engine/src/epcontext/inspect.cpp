// kiln/epcontext.h: inspectEpContextModel — every EPContext node followed to its binary, foreign ones reported.
#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "context_binary/context_binary.h"
#include "epcontext/ctx_model_writer.h"
#include "epcontext/epcontext_names.h"
#include "epcontext/io_signature.h"
#include "epcontext/payload_locator.h"
#include "ir/graph_paths.h"
#include "kiln/epcontext.h"
#include "onnx/model_loader.h"
#include "onnx/path_rules.h"
#include "util/mapped_file.h"

namespace kiln {
namespace {

using Payloads = std::map<std::string, epctx::PayloadRange>;

// A node Kiln's writer produced (its notes say so), for whichever of Kiln's EPs: its binary is a Kiln binary.
bool writtenByKiln(const ir::Node& node) {
  const auto notes = nlohmann::json::parse(node.attrString(epctx::kNotes, ""), nullptr, false);
  return notes.is_object() && notes.value("producer", "") == "kiln";
}

EpContextNodeInfo describeNode(const ir::Node& node, const std::string& graphPath, const Payloads& payloads) {
  EpContextNodeInfo info;
  info.name = node.name;
  info.graph = graphPath;
  info.source = node.attrString(epctx::kSource, "");
  info.vulkan = info.source.empty() || epctx::isVulkanSource(info.source) || writtenByKiln(node);
  info.mainContext = node.attrInt(epctx::kMainContext, 1);
  info.embedMode = node.attrInt(epctx::kEmbedMode, 1);
  info.maxSize = node.attrInt(epctx::kMaxSize, 0);
  const std::string context = node.attrString(epctx::kEpCacheContext, "");
  info.cacheContext = info.embedMode == 1 && info.mainContext != 0
                          ? "(embedded, " + std::to_string(context.size()) + " bytes)"
                          : context;
  info.embedded = info.embedMode == 1 && info.mainContext != 0;
  if (auto payload = payloads.find(node.name); info.embedded && payload != payloads.end()) {
    info.payloadOffset = payload->second.offset;
    info.payloadSize = payload->second.size;
  }
  info.partitionName = node.attrString(epctx::kPartitionName, "");
  info.sdkVersion = node.attrString(epctx::kEpSdkVersion, "");
  info.hardwareArchitecture = node.attrString(epctx::kHardwareArchitecture, "");
  info.onnxModelFilename = node.attrString(epctx::kOnnxModelFilename, "");
  info.notes = node.attrString(epctx::kNotes, "");
  info.inputs = node.inputs;
  info.outputs = node.outputs;
  return info;
}

class Inspector {
 public:
  Inspector(const ir::Model& model, std::string baseFolder, const Payloads& payloads, EpContextModelInfo& info)
      : model_(model), base_(std::move(baseFolder)), payloads_(payloads), info_(info) {}

  void walk(const ir::Graph& graph, const std::string& path) {
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
      const ir::Node& node = graph.nodes[i];
      if (epctx::isEpContextNode(node)) {
        info_.nodes.push_back(describeNode(node, path, payloads_));
        placed_.push_back({&graph, &node});
        if (info_.nodes.back().vulkan && info_.nodes.back().mainContext != 0) follow(node, info_.nodes.back());
      } else {
        info_.otherNodes++;
      }
      ir::forEachBody(node, i, path, [&](const ir::Graph& body, const std::string& bodyPath) { walk(body, bodyPath); });
    }
  }

  // main_context=0 nodes find their graph in the binaries the main nodes brought.
  void resolveSecondaryNodes() {
    for (auto& node : info_.nodes) {
      if (!node.vulkan || node.mainContext != 0) continue;
      for (const auto& [key, binary] : info_.binaries) {
        for (const auto& graph : binary.graphs) {
          if (graph.name == node.partitionName) node.binary = key;
        }
      }
      if (node.binary.empty()) node.problem = "no main context's binary holds graph '" + node.partitionName + "'";
    }
  }

  // Every followed node's inputs and outputs against the types its graph was compiled for (io_signature.h).
  void checkIo() {
    for (size_t i = 0; i < info_.nodes.size(); ++i) {
      EpContextNodeInfo& node = info_.nodes[i];
      if (!node.vulkan || node.binary.empty() || !node.problem.empty()) continue;
      const auto& graphs = info_.binaries.at(node.binary).graphs;
      const ContextBinaryGraph* compiled = nullptr;
      for (const auto& graph : graphs) {
        if (graph.name == node.partitionName) compiled = &graph;
      }
      if (!compiled && graphs.size() == 1) compiled = &graphs.front();
      if (!compiled) continue;
      const auto& [graph, irNode] = placed_[i];
      if (auto mismatch = epctx::ioMismatch(*graph, *irNode, {compiled->inputs, compiled->outputs, compiled->valueTypes})) {
        node.problem = *mismatch;
      }
    }
  }

 private:
  void follow(const ir::Node& node, EpContextNodeInfo& out) {
    const std::string context = node.attrString(epctx::kEpCacheContext, "");
    Result<std::shared_ptr<const ctxbin::ContextBinary>> binary = Status(StatusCode::FAIL, "");
    std::string key;
    if (out.embedMode == 1) {
      key = "embedded in '" + node.name + "'";
      const auto* bytes = reinterpret_cast<const std::byte*>(context.data());
      binary = ctxbin::ContextBinary::fromBytes(std::vector<std::byte>(bytes, bytes + context.size()), key);
    } else if (base_.empty()) {
      out.problem = "ep_cache_context names the file '" + context + "', but the model was read from memory with no "
                    "folder to find it in";
      return;
    } else {
      auto path = resolveContainedPath(base_, context, "ep_cache_context of EPContext node '" + node.name + "'");
      if (!path.isOk()) {
        out.problem = path.status().message();
        return;
      }
      key = path->string();
      binary = ctxbin::ContextBinary::open(key);
      if (binary.isOk()) checkRecordedId(*binary.value(), context);
    }
    if (!binary.isOk()) {
      out.problem = binary.status().message();
      return;
    }
    auto described = ctxbin::describeContextBinary(*binary.value(), key);
    if (!described.isOk()) {
      out.problem = described.status().message();
      return;
    }
    bool holds = false;
    for (const auto& graph : described->graphs) holds = holds || graph.name == out.partitionName;
    if (!holds && described->graphs.size() != 1) out.problem = "its binary holds no graph '" + out.partitionName + "'";
    out.binary = key;
    info_.binaries[key] = std::move(described).value();
  }

  void checkRecordedId(const ctxbin::ContextBinary& binary, const std::string& reference) {
    for (const auto& [key, recorded] : model_.metadata) {
      if (key != epctx::kBinaryHashKeyPrefix + reference) continue;
      const std::string actual = ctxbin::contentIdHex(binary.contentId());
      if (recorded != actual) {
        info_.problems.push_back("binary " + reference + " does not match the ctx model (content id " + actual +
                                 ", recorded " + recorded + ")");
      }
    }
  }

  const ir::Model& model_;
  std::string base_;
  const Payloads& payloads_;
  EpContextModelInfo& info_;
  std::vector<std::pair<const ir::Graph*, const ir::Node*>> placed_;  // parallel to info_.nodes
};

// The description of a loaded ctx model; `payloads` locates embedded binaries in its serialized bytes.
Result<EpContextModelInfo> describeModel(const onnx_io::LoadedModel& loaded, const std::string& path,
                                         const std::string& baseFolder, std::span<const std::byte> bytes) {
  KILN_ASSIGN_OR_RETURN(const Payloads payloads, epctx::locateEpContextPayloads(bytes));
  EpContextModelInfo info;
  info.path = path;
  const ir::Graph& graph = *loaded.model.graph;
  for (const auto& in : graph.inputs) {
    if (!graph.isInitializer(in.name)) info.inputs.push_back(ir::toValueMetadata(in));
  }
  for (const auto& out : graph.outputs) info.outputs.push_back(ir::toValueMetadata(out));
  for (const auto& node : graph.nodes) {
    info.mainGraphNodes.push_back({node.name, node.opType, node.domain, node.inputs, node.outputs});
  }
  for (const auto& entry : graph.initializers) {
    // Not a structured binding: clang before 16 (the fuzz preset's clang-14) cannot capture one in a lambda.
    const std::string& name = entry.first;
    const bool isInput = std::any_of(graph.inputs.begin(), graph.inputs.end(), [&](const auto& v) { return v.name == name; });
    if (!isInput) info.initializers.push_back(name);
  }
  info.metadata = loaded.model.metadata;
  Inspector inspector(loaded.model, baseFolder, payloads, info);
  inspector.walk(graph, ir::kMainGraphPath);
  inspector.resolveSecondaryNodes();
  inspector.checkIo();
  return info;
}

}  // namespace

bool isEpContextNode(const std::string& opType, const std::string& domain) {
  return opType == epctx::kOpType && domain == epctx::kDomain;
}

Result<EpContextModelInfo> inspectEpContextModel(const std::string& path) {
  KILN_ASSIGN_OR_RETURN(const onnx_io::LoadedModel loaded, onnx_io::loadModelFile(path));
  KILN_ASSIGN_OR_RETURN(const std::shared_ptr<MappedFile> file, MappedFile::open(path));
  const auto parent = std::filesystem::path(path).parent_path();
  auto info = describeModel(loaded, path, parent.empty() ? "." : parent.string(), file->bytes());
  if (!info.isOk()) return info.status().withContext(path);
  return info;
}

Result<EpContextModelInfo> inspectEpContextModel(std::span<const std::byte> modelBytes, const std::string& baseFolder) {
  KILN_ASSIGN_OR_RETURN(const onnx_io::LoadedModel loaded, onnx_io::loadModelBuffer(modelBytes));
  return describeModel(loaded, "", baseFolder, modelBytes);
}

}  // namespace kiln
