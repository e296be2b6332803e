// What every EPContext test asserts, in one place: the files a compile wrote, the EPContext nodes and attributes of
// a ctx model read back with onnx protobuf, and sessions reloaded from a ctx model (path and bytes) that do no
// compile work and give the source model's outputs bit for bit.
#pragma once

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "kiln/session.h"

namespace kiln::testing {

// Every regular file and symlink under `folder`, as paths relative to it ("out/m_ctx.onnx").
std::set<std::string> listFiles(const std::filesystem::path& folder);
// `path` relative to `folder` ("" when it is not inside).
std::string relativeTo(const std::filesystem::path& folder, const std::string& path);
// A set as "{a, b}" for messages.
std::string describe(const std::set<std::string>& items);

std::vector<std::byte> readBytes(const std::string& path);
void writeFileBytes(const std::string& path, std::span<const std::byte> bytes);
onnx::ModelProto parseModel(std::span<const std::byte> bytes);
onnx::ModelProto readModel(const std::string& path);
std::filesystem::file_time_type modificationTime(const std::string& path);

// EPContext nodes of `model` in the order the writer numbers them: graph order, descending into a node's bodies
// (in attribute order) right after the node.
std::vector<onnx::NodeProto*> epContextNodes(onnx::ModelProto& model);
const onnx::AttributeProto* findAttribute(const onnx::NodeProto& node, const std::string& name);
onnx::AttributeProto* findAttribute(onnx::NodeProto& node, const std::string& name);
// Every initializer of every graph (bodies included), by name.
std::map<std::string, const onnx::TensorProto*> allInitializers(const onnx::ModelProto& model);
// The external-data "location" of an initializer, "" when it is embedded.
std::string externalLocation(const onnx::TensorProto& tensor);
std::string metadataValue(const onnx::ModelProto& model, const std::string& key);

// What a ctx model must look like.
struct CtxExpectation {
  int embedMode = 0;
  int nodes = 0;
  std::string binaryReference;        // embed mode 0: ep_cache_context
  std::string prefix;                 // every node name and partition_name starts with it
  std::string sourceModelFilename;    // onnx_model_filename; empty: the attribute is absent (input from bytes)
  std::set<std::string> absentInitializers;               // held by the binary
  std::map<std::string, std::string> initializerLocations;  // kept ones: "" embedded, else the external location
};
void expectCtxModel(onnx::ModelProto ctx, const onnx::ModelProto& source, const CtxExpectation& expected);

// Runs `session` on every input set; empty on failure (with the failure recorded).
std::vector<std::vector<NamedTensor>> runAll(Session& session, const std::vector<std::vector<NamedTensor>>& inputSets);
// Outputs equal in names, order, shapes and bytes.
void expectSameOutputs(const std::vector<std::vector<NamedTensor>>& expected,
                       const std::vector<std::vector<NamedTensor>>& actual, const std::string& what);
// A session loaded from a ctx model did none of a compile's work.
void expectNoCompileWork(const Session& session, const std::string& what);

// Shortcuts for setting config entries in tests.
SessionOptions withEntries(SessionOptions options, const std::map<std::string, std::string>& entries);

}  // namespace kiln::testing
