#include "model_inputs.h"

#include <filesystem>
#include <random>

#include "session_flags.h"
#include "kiln/tensor_io.h"
#include "kiln/tensor_size.h"

namespace kiln::app {
namespace {

// Random values in a range that suits the element type; deterministic for a seed.
Tensor randomTensor(DataType type, const Shape& shape, std::mt19937& rng) {
  Tensor t(type, shape);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  std::uniform_int_distribution<int> small(0, 9);
  const int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) {
    switch (type) {
      case DataType::FLOAT: t.data<float>()[i] = uniform(rng); break;
      case DataType::DOUBLE: t.data<double>()[i] = uniform(rng); break;
      case DataType::FLOAT16: t.data<Float16>()[i] = Float16(uniform(rng)); break;
      case DataType::INT64: t.data<int64_t>()[i] = small(rng); break;
      case DataType::INT32: t.data<int32_t>()[i] = small(rng); break;
      case DataType::UINT8: t.data<uint8_t>()[i] = static_cast<uint8_t>(small(rng)); break;
      case DataType::INT8: t.data<int8_t>()[i] = static_cast<int8_t>(small(rng)); break;
      case DataType::BOOL: t.data<bool>()[i] = small(rng) % 2; break;
      default: break;
    }
  }
  return t;
}

}  // namespace

Result<std::vector<NamedTensor>> prepareInputs(const Session& session, const std::vector<std::string>& inputArgs,
                                               unsigned seed) {
  return prepareInputs(session.inputs(), inputArgs, {}, "", seed);
}

Result<std::vector<NamedTensor>> prepareInputs(const std::vector<ValueMetadata>& declared,
                                               const std::vector<std::string>& inputArgs,
                                               const std::map<std::string, Shape>& shapes, const std::string& inputDir,
                                               unsigned seed) {
  std::map<std::string, Tensor> given;
  if (!inputDir.empty()) {
    std::error_code error;
    if (!std::filesystem::is_directory(inputDir, error)) {
      return Status(StatusCode::INVALID_ARGUMENT, "--input-dir '" + inputDir + "' is not a folder");
    }
    for (const auto& meta : declared) {
      const auto file = std::filesystem::path(inputDir) / (meta.name + ".npy");
      if (!std::filesystem::is_regular_file(file, error)) continue;
      KILN_ASSIGN_OR_RETURN(given[meta.name], readNpyFile(file.string()));
    }
  }
  for (const auto& entry : inputArgs) {
    KILN_ASSIGN_OR_RETURN(auto kv, splitAssignment(entry, "--input"));
    KILN_ASSIGN_OR_RETURN(Tensor tensor, readTensorFile(kv.second));
    given[kv.first] = std::move(tensor);
  }
  std::mt19937 rng(seed);
  std::vector<NamedTensor> inputs;
  for (const auto& meta : declared) {
    if (auto it = given.find(meta.name); it != given.end()) {
      inputs.push_back({meta.name, it->second});
      given.erase(it);
      continue;
    }
    Shape shape;
    for (const auto& d : meta.shape) shape.push_back(d.isFixed() ? d.value : 1);
    if (auto fixed = shapes.find(meta.name); fixed != shapes.end()) shape = fixed->second;
    // Checked before allocating: a --shape (or a declared shape) of terabytes is an error, not an abort.
    KILN_RETURN_IF_ERROR(checkedTensorBytes(meta.dtype, shape, kDefaultMaxTensorBytes, "input '" + meta.name + "'").status());
    inputs.push_back({meta.name, randomTensor(meta.dtype, shape, rng)});
  }
  if (!given.empty()) {
    return Status(StatusCode::INVALID_ARGUMENT, "the model has no input named '" + given.begin()->first + "'");
  }
  return inputs;
}

}  // namespace kiln::app
