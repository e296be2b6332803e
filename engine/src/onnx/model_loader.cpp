#include "onnx/model_loader.h"

#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "epcontext/epcontext_names.h"
#include "onnx/contrib_schemas.h"
#include "onnx/function_inliner.h"
#include "onnx/path_rules.h"
#include "onnx/tensor_proto.h"
#include "util/file_io.h"
#include "util/log.h"
#include "util/stopwatch.h"

namespace kiln::onnx_io {
namespace {

struct ExternalInfo {
  std::string location;
  int64_t offset = 0;
  int64_t length = -1;
};

Result<ExternalInfo> parseExternalInfo(const onnx::TensorProto& tensor) {
  ExternalInfo info;
  for (const auto& entry : tensor.external_data()) {
    try {
      if (entry.key() == "location") info.location = entry.value();
      else if (entry.key() == "offset") info.offset = std::stoll(entry.value());
      else if (entry.key() == "length") info.length = std::stoll(entry.value());
    } catch (const std::exception&) {
      return Status(StatusCode::INVALID_GRAPH, "tensor '" + tensor.name() + "' has a malformed external_data " +
                                                   entry.key() + " '" + entry.value() + "'");
    }
  }
  if (info.offset < 0) return Status(StatusCode::INVALID_GRAPH, "tensor '" + tensor.name() + "' has a negative offset");
  return info;
}

// Where the external data of `tensor` lies, checked: the file exists inside `base` (path rules) and holds the range.
Result<ExternalInitializerInfo> externalRangeOf(const onnx::TensorProto& tensor, const std::filesystem::path& base) {
  KILN_ASSIGN_OR_RETURN(const ExternalInfo info, parseExternalInfo(tensor));
  KILN_ASSIGN_OR_RETURN(const auto path, resolveContainedPath(base, info.location, "external data location"));
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return Status(StatusCode::NO_SUCHFILE, "external data file '" + path.string() + "' of tensor '" + tensor.name() +
                                               "' does not exist");
  }
  const auto fileSize = static_cast<int64_t>(std::filesystem::file_size(path, ec));
  const int64_t length = info.length >= 0 ? info.length : fileSize - info.offset;
  if (info.offset > fileSize || length < 0 || info.offset + length > fileSize) {
    return Status(StatusCode::INVALID_GRAPH, "external data of tensor '" + tensor.name() + "' (offset " +
                                                 std::to_string(info.offset) + ", length " + std::to_string(length) +
                                                 ") lies outside '" + path.string() + "' (" +
                                                 std::to_string(fileSize) + " bytes)");
  }
  return ExternalInitializerInfo{path.string(), info.offset, length};
}

Status inlineTensor(onnx::TensorProto& tensor, const std::filesystem::path& base) {
  if (tensor.data_location() != onnx::TensorProto::EXTERNAL) return Status::ok();
  KILN_ASSIGN_OR_RETURN(const ExternalInitializerInfo range, externalRangeOf(tensor, base));
  std::string data(static_cast<size_t>(range.size), '\0');
  KILN_RETURN_IF_ERROR(readExternalRange(range, std::as_writable_bytes(std::span(data))));
  tensor.set_raw_data(std::move(data));
  tensor.clear_external_data();
  tensor.set_data_location(onnx::TensorProto::DEFAULT);
  return Status::ok();
}

// The bytes a tensor of `proto`'s type and shape holds; -1 for strings, unknown types and impossible shapes.
int64_t expectedBytes(const onnx::TensorProto& proto) {
  const size_t element = dataTypeSize(dataTypeFromOnnx(proto.data_type()));
  if (element == 0) return -1;
  int64_t count = 1;
  for (const int64_t d : proto.dims()) {
    if (d < 0 || (d != 0 && count > (int64_t{1} << 40) / d)) return -1;
    count *= d;
  }
  return count * static_cast<int64_t>(element);
}

// The main graph's external initializers of at least kDeferredExternalBytes whose range holds exactly their bytes:
// they stay in their file (the IR gets type and shape only). Others, and every range error, take the inline path.
std::set<std::string> deferrableInitializers(const onnx::GraphProto& graph, const std::filesystem::path& base) {
  std::set<std::string> deferred;
  for (const auto& init : graph.initializer()) {
    if (init.data_location() != onnx::TensorProto::EXTERNAL) continue;
    const int64_t bytes = expectedBytes(init);
    if (bytes < static_cast<int64_t>(kDeferredExternalBytes)) continue;
    auto range = externalRangeOf(init, base);
    if (range.isOk() && range->size == bytes) deferred.insert(init.name());
  }
  return deferred;
}

Status inlineGraph(onnx::GraphProto& graph, const std::filesystem::path& base, const std::set<std::string>& keep = {}) {
  for (auto& init : *graph.mutable_initializer()) {
    if (!keep.count(init.name())) KILN_RETURN_IF_ERROR(inlineTensor(init, base));
  }
  for (auto& node : *graph.mutable_node()) {
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_t()) KILN_RETURN_IF_ERROR(inlineTensor(*attr.mutable_t(), base));
      for (auto& t : *attr.mutable_tensors()) KILN_RETURN_IF_ERROR(inlineTensor(t, base));
      if (attr.has_g()) KILN_RETURN_IF_ERROR(inlineGraph(*attr.mutable_g(), base));
      for (auto& g : *attr.mutable_graphs()) KILN_RETURN_IF_ERROR(inlineGraph(g, base));
    }
  }
  return Status::ok();
}

bool graphHasExternalData(const onnx::GraphProto& graph) {
  for (const auto& init : graph.initializer()) {
    if (init.data_location() == onnx::TensorProto::EXTERNAL) return true;
  }
  for (const auto& node : graph.node()) {
    for (const auto& attr : node.attribute()) {
      if (attr.has_t() && attr.t().data_location() == onnx::TensorProto::EXTERNAL) return true;
      if (attr.has_g() && graphHasExternalData(attr.g())) return true;
      for (const auto& g : attr.graphs()) {
        if (graphHasExternalData(g)) return true;
      }
    }
  }
  return false;
}

Status recordExternalInitializers(LoadedModel& loaded, const std::filesystem::path& base) {
  for (const auto& init : loaded.proto.graph().initializer()) {
    if (init.data_location() != onnx::TensorProto::EXTERNAL) continue;
    KILN_ASSIGN_OR_RETURN(const ExternalInfo info, parseExternalInfo(init));
    KILN_ASSIGN_OR_RETURN(const auto path, resolveContainedPath(base, info.location, "external data location"));
    std::error_code ec;
    const int64_t size = info.length >= 0 ? info.length
                                          : static_cast<int64_t>(std::filesystem::file_size(path, ec)) - info.offset;
    loaded.externalInitializers[init.name()] = {path.string(), info.offset, size};
  }
  return Status::ok();
}

// An EPContext model carries the value types its compile inferred; ONNX shape inference cannot see through
// EPContext nodes anyway, so it is skipped for them (a measurable share of a cached load).
bool hasEpContextNode(const onnx::GraphProto& graph) {
  for (const auto& node : graph.node()) {
    if (node.op_type() == epctx::kOpType && node.domain() == epctx::kDomain) return true;
    for (const auto& attr : node.attribute()) {
      if (attr.has_g() && hasEpContextNode(attr.g())) return true;
      for (const auto& g : attr.graphs()) {
        if (hasEpContextNode(g)) return true;
      }
    }
  }
  return false;
}

// The schema of `node` for the model's opsets; nullptr for an unknown op or domain (the EPs say so later).
const onnx::OpSchema* schemaOf(const onnx::NodeProto& node, const std::map<std::string, int64_t>& opsets) {
  const std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
  auto version = opsets.find(domain);
  if (version == opsets.end()) return nullptr;
  return onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(version->second), domain);
}

// A required input (one the op's schema does not mark optional or variadic) named '' is refused at load: kernels
// index their inputs by position, and an empty name there is no value at all.
Status checkRequiredInputs(const onnx::NodeProto& node, const onnx::OpSchema& schema) {
  const auto& formal = schema.inputs();
  for (int i = 0; i < node.input_size() && static_cast<size_t>(i) < formal.size(); ++i) {
    if (!node.input(i).empty() || formal[i].GetOption() != onnx::OpSchema::Single) continue;
    return Status(StatusCode::INVALID_GRAPH, "node '" + node.name() + "' (" + node.op_type() + "): required input " +
                                                 std::to_string(i) + " (" + formal[i].GetName() + ") is empty");
  }
  return Status::ok();
}

// Every attribute the schema requires is present, and every attribute the schema knows has the schema's type:
// libonnx's shape inference functions read them unchecked (Scan without num_scan_inputs dereferenced null).
Status checkAttributes(const onnx::NodeProto& node, const onnx::OpSchema& schema) {
  const auto where = [&] { return "node '" + node.name() + "' (" + node.op_type() + "): attribute "; };
  for (const auto& [name, formal] : schema.attributes()) {
    const auto found = std::find_if(node.attribute().begin(), node.attribute().end(),
                                    [&name = name](const onnx::AttributeProto& attr) { return attr.name() == name; });
    if (found == node.attribute().end()) {
      if (formal.required) return Status(StatusCode::INVALID_GRAPH, where() + name + " is required but missing");
      continue;
    }
    if (found->type() != formal.type && found->type() != onnx::AttributeProto::UNDEFINED) {
      return Status(StatusCode::INVALID_GRAPH, where() + name + " has type " +
                                                   onnx::AttributeProto::AttributeType_Name(found->type()) + ", not " +
                                                   onnx::AttributeProto::AttributeType_Name(formal.type));
    }
  }
  return Status::ok();
}

// Per node, before any arithmetic and before ONNX shape inference sees the model: required inputs present
// (checkRequiredInputs), attributes present and typed as the schema says (checkAttributes), and the window
// attributes of the convolution and pooling ops (libonnx divides by strides): strides, dilations, kernel_shape and
// group must be positive, pads non-negative. Every graph is visited, subgraphs
// too, with an explicit stack (no recursion a model controls).
Status checkNodes(const onnx::ModelProto& model) {
  std::map<std::string, int64_t> opsets;
  for (const auto& opset : model.opset_import()) opsets[opset.domain() == "ai.onnx" ? "" : opset.domain()] = opset.version();
  const onnx::GraphProto& main = model.graph();
  static const std::set<std::string> kWindowOps = {"AveragePool", "MaxPool", "LpPool", "MaxUnpool", "Conv",
                                                   "ConvTranspose", "ConvInteger", "QLinearConv", "DeformConv"};
  std::vector<const onnx::GraphProto*> pending = {&main};
  while (!pending.empty()) {
    const onnx::GraphProto* graph = pending.back();
    pending.pop_back();
    for (const auto& node : graph->node()) {
      if (const onnx::OpSchema* schema = schemaOf(node, opsets)) {
        KILN_RETURN_IF_ERROR(checkRequiredInputs(node, *schema));
        KILN_RETURN_IF_ERROR(checkAttributes(node, *schema));
      }
      const bool windowOp = kWindowOps.count(node.op_type()) != 0 && (node.domain().empty() || node.domain() == "ai.onnx");
      for (const auto& attr : node.attribute()) {
        if (attr.has_g()) pending.push_back(&attr.g());
        for (const auto& g : attr.graphs()) pending.push_back(&g);
        if (!windowOp) continue;
        const std::string& name = attr.name();
        const bool positive = name == "strides" || name == "dilations" || name == "kernel_shape" || name == "group";
        if (!positive && name != "pads") continue;
        std::vector<int64_t> values(attr.ints().begin(), attr.ints().end());
        if (attr.type() == onnx::AttributeProto::INT) values.push_back(attr.i());
        for (int64_t v : values) {
          if (positive ? v > 0 : v >= 0) continue;
          return Status(StatusCode::INVALID_GRAPH, "node '" + node.name() + "' (" + node.op_type() + "): attribute " +
                                                       name + " holds " + std::to_string(v) + "; " + name +
                                                       (positive ? " must be positive" : " must not be negative"));
        }
      }
    }
  }
  return Status::ok();
}

Result<LoadedModel> finishLoad(LoadedModel loaded, const std::string& baseFolder, const LoadOptions& options,
                               const Stopwatch& clock) {
  // Checked before shape inference, which would add an empty graph.
  if (!loaded.proto.has_graph()) return Status(StatusCode::INVALID_GRAPH, "the model has no graph");
  if (graphHasExternalData(loaded.proto.graph())) {
    if (baseFolder.empty()) {
      return Status(StatusCode::INVALID_ARGUMENT,
                    "the model has external data: set session.model_external_initializers_file_folder_path");
    }
    KILN_RETURN_IF_ERROR(recordExternalInitializers(loaded, baseFolder));
    if (options.deferLargeExternalData) loaded.deferred = deferrableInitializers(loaded.proto.graph(), baseFolder);
    KILN_RETURN_IF_ERROR(inlineGraph(*loaded.proto.mutable_graph(), baseFolder, loaded.deferred));
  }
  if (options.inlineLocalFunctions) KILN_RETURN_IF_ERROR(inlineLocalFunctions(loaded.proto));
  KILN_RETURN_IF_ERROR(checkNodes(loaded.proto));
  loaded.loadMs = clock.elapsedMs();
  if (options.runShapeInference && !hasEpContextNode(loaded.proto.graph())) {
    Stopwatch shapeClock;
    inferShapes(loaded.proto);
    loaded.shapeInferenceMs = shapeClock.elapsedMs();
  }
  KILN_ASSIGN_OR_RETURN(loaded.model, modelFromProto(loaded.proto, loaded.deferred));
  return loaded;
}

// The convolutions' shape inference in libonnx 1.12 takes the kernel rank from the weight and indexes the data
// input's per-axis attributes by it: a weight whose rank differs from the data's (a Conv after a Flatten, a bias
// passed as the weight) read through a null pointer. Ranks only known from inference itself, so the check runs
// there: one more failed inference step (non-fatal, the kernels report the mismatch), never a crash.
void requireEqualRanks(onnx::InferenceContext& ctx, size_t data, size_t weight) {
  if (ctx.getNumInputs() <= std::max(data, weight)) return;
  const onnx::TypeProto* x = ctx.getInputType(data);
  const onnx::TypeProto* w = ctx.getInputType(weight);
  if (x == nullptr || w == nullptr || !x->tensor_type().has_shape() || !w->tensor_type().has_shape()) return;
  const int xRank = x->tensor_type().shape().dim_size(), wRank = w->tensor_type().shape().dim_size();
  if (xRank != wRank) fail_shape_inference("input rank ", xRank, " differs from weight rank ", wRank);
}

// The registry shape inference runs with: libonnx's schemas, those of the convolutions with their inference
// function behind requireEqualRanks, and Kiln's for the contrib operators it runs (contrib_schemas.h). Guarded copies are made once per schema and kept (thread-safe).
class GuardedSchemaRegistry : public onnx::ISchemaRegistry {
 public:
  const onnx::OpSchema* GetSchema(const std::string& key, const int maxInclusiveVersion,
                                  const std::string& domain) const override {
    const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(key, maxInclusiveVersion, domain);
    if (schema == nullptr) return contribSchema(key, domain);
    if (domain != "" && domain != "ai.onnx") return schema;
    size_t weight = 0;
    if (key == "Conv" || key == "ConvTranspose" || key == "ConvInteger") {
      weight = 1;
    } else if (key == "QLinearConv") {
      weight = 3;
    } else {
      return schema;
    }
    std::lock_guard lock(mutex_);
    std::unique_ptr<onnx::OpSchema>& guarded = guarded_[schema];
    if (!guarded) {
      guarded = std::make_unique<onnx::OpSchema>(*schema);
      guarded->TypeAndShapeInferenceFunction(
          [original = schema->GetTypeAndShapeInferenceFunction(), weight](onnx::InferenceContext& ctx) {
            requireEqualRanks(ctx, 0, weight);
            original(ctx);
          });
    }
    return guarded.get();
  }

 private:
  mutable std::mutex mutex_;
  mutable std::map<const onnx::OpSchema*, std::unique_ptr<onnx::OpSchema>> guarded_;
};

}  // namespace

Status readExternalRange(const ExternalInitializerInfo& range, std::span<std::byte> out) {
  if (static_cast<int64_t>(out.size()) != range.size) {
    return Status(StatusCode::INVALID_ARGUMENT, "reading " + std::to_string(range.size) + " bytes of '" + range.path +
                                                    "' into " + std::to_string(out.size()));
  }
  std::ifstream in(range.path, std::ios::binary);
  in.seekg(range.offset);
  if (!out.empty() && !in.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(out.size()))) {
    return Status(StatusCode::FAIL, "cannot read external data from '" + range.path + "'");
  }
  return Status::ok();
}

Result<Tensor> readDeferredInitializer(const Tensor& shapeOnly, const ExternalInitializerInfo& range) {
  if (static_cast<int64_t>(shapeOnly.byteSize()) != range.size) {
    return Status(StatusCode::INVALID_GRAPH, "external data in '" + range.path + "' has " + std::to_string(range.size) +
                                                 " bytes, its tensor needs " + std::to_string(shapeOnly.byteSize()));
  }
  Tensor tensor(shapeOnly.dtype(), shapeOnly.shape());
  KILN_RETURN_IF_ERROR(readExternalRange(range, std::span(static_cast<std::byte*>(tensor.rawData()), tensor.byteSize())));
  return tensor;
}

Status loadDeferredInitializers(ir::Graph& graph, const std::map<std::string, ExternalInitializerInfo>& ranges,
                                const std::function<bool(const std::string&)>& needed) {
  for (auto& [name, tensor] : graph.initializers) {
    const auto range = ranges.find(name);
    if (range == ranges.end() || !isDeferred(tensor) || !needed(name)) continue;
    KILN_ASSIGN_OR_RETURN(tensor, readDeferredInitializer(tensor, range->second));
  }
  return Status::ok();
}

Status inlineExternalData(onnx::ModelProto& model, const std::string& baseFolder) {
  return inlineGraph(*model.mutable_graph(), baseFolder);
}

void inferShapes(onnx::ModelProto& model) {
  static const GuardedSchemaRegistry registry;
  try {
    onnx::ShapeInferenceOptions options;
    options.check_type = false;
    options.error_mode = 0;
    onnx::shape_inference::InferShapes(model, &registry, options);
  } catch (const std::exception& e) {
    log::debug("shape inference stopped early: {}", e.what());
  }
}

Result<LoadedModel> loadModelFile(const std::string& path, const LoadOptions& options) {
  Stopwatch clock;
  finishInterruptedCommits(path);  // a compile killed between writing the binary and the ctx model
  KILN_ASSIGN_OR_RETURN(const std::vector<std::byte> bytes, readFileBytes(path));
  LoadedModel loaded;
  if (bytes.empty()) return Status(StatusCode::INVALID_PROTOBUF, "'" + path + "' is empty");
  if (!loaded.proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return Status(StatusCode::INVALID_PROTOBUF, "'" + path + "' is not a valid ONNX model (protobuf parse failed)");
  }
  std::string base = options.externalDataFolder;
  if (base.empty()) {
    const auto parent = std::filesystem::path(path).parent_path();
    base = parent.empty() ? "." : parent.string();
  }
  auto result = finishLoad(std::move(loaded), base, options, clock);
  if (!result.isOk()) return result.status().withContext("loading '" + path + "'");
  return result;
}

Result<std::map<std::string, ExternalInitializerInfo>> externalInitializerRanges(std::span<const std::byte> bytes,
                                                                                 const std::string& path) {
  LoadedModel loaded;
  if (bytes.empty() || !loaded.proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return Status(StatusCode::INVALID_PROTOBUF, "'" + path + "' is not a valid ONNX model (protobuf parse failed)");
  }
  const auto parent = std::filesystem::path(path).parent_path();
  KILN_RETURN_IF_ERROR(recordExternalInitializers(loaded, parent.empty() ? "." : parent));
  return std::move(loaded.externalInitializers);
}

Result<LoadedModel> loadModelBuffer(std::span<const std::byte> bytes, const LoadOptions& options) {
  Stopwatch clock;
  LoadedModel loaded;
  if (bytes.empty() || !loaded.proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return Status(StatusCode::INVALID_PROTOBUF, "the buffer is not a valid ONNX model (protobuf parse failed)");
  }
  return finishLoad(std::move(loaded), options.externalDataFolder, options, clock);
}

}  // namespace kiln::onnx_io
