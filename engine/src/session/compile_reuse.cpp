#include "session/compile_reuse.h"

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <map>

#include "context_binary/context_binary.h"
#include "context_binary/format.h"
#include "epcontext/epcontext_names.h"
#include "onnx/path_rules.h"
#include "util/file_io.h"

namespace kiln {
namespace {

const onnx::AttributeProto* attribute(const onnx::NodeProto& node, const char* name) {
  for (const auto& attr : node.attribute()) {
    if (attr.name() == name) return &attr;
  }
  return nullptr;
}

// Every EPContext node of `graph` and of the bodies it holds.
void collectEpContextNodes(const onnx::GraphProto& graph, std::vector<const onnx::NodeProto*>& out) {
  for (const auto& node : graph.node()) {
    if (node.op_type() == epctx::kOpType && node.domain() == epctx::kDomain) out.push_back(&node);
    for (const auto& attr : node.attribute()) {
      if (attr.has_g()) collectEpContextNodes(attr.g(), out);
      for (const auto& body : attr.graphs()) collectEpContextNodes(body, out);
    }
  }
}

// Why one main-context EPContext node's binary is not whole ("" when it is): it must pass every integrity check of
// the format and, for a file, be the binary the ctx model recorded (its content id).
std::string binaryProblem(const onnx::NodeProto& node, const std::map<std::string, std::string>& metadata,
                          const std::filesystem::path& folder, std::string& binaryPath) {
  const auto* embed = attribute(node, epctx::kEmbedMode);
  const auto* context = attribute(node, epctx::kEpCacheContext);
  if (!context) return "it has no ep_cache_context";
  if (!embed || embed->i() == 1) {
    auto binary = ctxbin::ContextBinary::fromBytes(
        std::vector<std::byte>(reinterpret_cast<const std::byte*>(context->s().data()),
                               reinterpret_cast<const std::byte*>(context->s().data()) + context->s().size()),
        "the binary embedded in '" + node.name() + "'");
    return binary.isOk() ? "" : binary.status().message();
  }
  auto path = resolveContainedPath(folder, context->s(), "ep_cache_context");
  if (!path.isOk()) return path.status().message();
  auto binary = ctxbin::ContextBinary::open(path->string());
  if (!binary.isOk()) return binary.status().message();
  const auto recorded = metadata.find(epctx::kBinaryHashKeyPrefix + context->s());
  const std::string actual = ctxbin::contentIdHex((*binary)->contentId());
  if (recorded == metadata.end() || recorded->second != actual) {
    return "binary " + context->s() + " is not the one the ctx model was written with (content id " + actual + ")";
  }
  if (binaryPath.empty()) binaryPath = path->string();
  return "";
}

}  // namespace

Result<ExistingOutputs> judgeExistingOutputs(const std::string& outputPath, const epctx::CompileRecord& expected) {
  ExistingOutputs existing;
  std::error_code error;
  if (!std::filesystem::exists(outputPath, error)) {
    existing.reasons.push_back("no output yet");
    return existing;
  }
  auto bytes = readFileBytes(outputPath);
  onnx::ModelProto model;
  if (!bytes.isOk() || !model.ParseFromArray(bytes->data(), static_cast<int>(bytes->size()))) {
    existing.reasons.push_back("the output cannot be read as an ONNX model" +
                               (bytes.isOk() ? std::string() : ": " + bytes.status().message()));
    return existing;
  }
  std::map<std::string, std::string> metadata;
  for (const auto& entry : model.metadata_props()) metadata[entry.key()] = entry.value();
  const auto record = metadata.count(epctx::kCompileRecordKey) ? epctx::decodeCompileRecord(metadata[epctx::kCompileRecordKey])
                                                               : std::nullopt;
  if (!record || record->identity.empty()) {
    existing.reasons.push_back("the output records no compile identity (written by an older Kiln or another tool)");
    return existing;
  }
  existing.identity = record->identity;
  const std::string wanted = epctx::compileIdentityOf(expected);
  if (record->identity != wanted) {
    existing.reasons = epctx::stalenessOf(*record, expected.sourceHash, expected.options, expected.target).reasons;
    if (existing.reasons.empty()) {  // e.g. an option this Kiln records that the output's Kiln did not
      existing.reasons.push_back("compile identity " + wanted + " differs from the recorded " + record->identity);
    }
    return existing;
  }
  std::vector<const onnx::NodeProto*> nodes;
  collectEpContextNodes(model.graph(), nodes);
  const std::filesystem::path folder = std::filesystem::path(outputPath).parent_path();
  for (const onnx::NodeProto* node : nodes) {
    const auto* main = attribute(*node, epctx::kMainContext);
    if (main && main->i() == 0) continue;  // its graph is in another node's binary
    const std::string problem = binaryProblem(*node, metadata, folder.empty() ? "." : folder, existing.binaryPath);
    if (!problem.empty()) existing.reasons.push_back("EPContext node '" + node->name() + "': " + problem);
  }
  existing.epContextNodes = static_cast<int>(nodes.size());
  existing.reusable = existing.reasons.empty();
  return existing;
}

}  // namespace kiln
