// _kiln.compile: kiln::compileModel for kiln.ModelCompiler (kiln/_compiler.py), output to a file or to bytes.
#include <pybind11/stl.h>

#include <optional>
#include <span>
#include <string>

#include "bindings.h"
#include "kiln/compiler.h"
#include "long_call.h"
#include "status_error.h"

namespace py = pybind11;

namespace kiln::python {
namespace {

struct CompileRequestArgs {
  std::map<std::string, std::string> config;
  std::map<std::string, std::vector<int64_t>> inputShapes;
  bool embed = false;
  std::optional<std::string> externalInitializersFile;
  size_t externalInitializersThreshold = 1024;
  uint32_t flags = 0;
  std::optional<std::string> optimizationLevel;
  std::optional<std::string> targetProfile;
  std::optional<std::string> nodeNamePrefix;
  std::optional<std::string> binaryDirectory;
  std::optional<std::string> binaryModelName;
};

ModelCompilationOptions compilationOptions(const CompileRequestArgs& args) {
  ModelCompilationOptions options(sessionOptionsFrom(args.config, args.inputShapes));
  options.setEpContextEmbedMode(args.embed);
  options.setFlags(static_cast<CompileFlags>(args.flags));
  if (args.externalInitializersFile) {
    options.setOutputModelExternalInitializersFile(*args.externalInitializersFile,
                                                   args.externalInitializersThreshold);
  }
  if (args.optimizationLevel)
    options.setGraphOptimizationLevel(valueOrThrow(parseGraphOptimizationLevel(*args.optimizationLevel)));
  if (args.targetProfile) options.setTargetProfile(*args.targetProfile);
  if (args.nodeNamePrefix) options.setNodeNamePrefix(*args.nodeNamePrefix);
  if (args.binaryDirectory || args.binaryModelName) {
    options.setEpContextBinaryInformation(args.binaryDirectory.value_or("."),
                                          args.binaryModelName.value_or("model.onnx"));
  }
  return options;
}

py::dict resultToPython(const CompileResult& result) {
  py::dict timings, counters;
  forEachTiming(result.timings, [&](std::string_view key, double value) { timings[py::str(key)] = value; });
  forEachCounter(result.counters,
                 [&](std::string_view key, int64_t value) { counters[py::str(key)] = value; });
  py::dict out;
  out["output_model_path"] = result.outputModelPath;
  out["binary_path"] = result.binaryPath;
  out["external_initializers_path"] = result.externalInitializersPath;
  out["ep_context_nodes"] = result.epContextNodes;
  out["files_written"] = result.filesWritten;
  out["timings"] = timings;
  out["counters"] = counters;
  return out;
}

// Compiles `model` (path or bytes) to `outputPath`, or to bytes when it is None: (result dict, bytes or
// None).
py::tuple compile(const py::object& model, const std::optional<std::string>& outputPath,
                  const CompileRequestArgs& args, py::object progressCallback,
                  std::shared_ptr<CancellationToken> token) {
  ModelCompilationOptions options = compilationOptions(args);
  if (!token) token = std::make_shared<CancellationToken>();
  auto progress = std::make_shared<PythonProgress>(std::move(progressCallback), token);
  options.sessionOptions().progress = progress->sink();
  py::bytes inputBytes;
  if (py::isinstance<py::bytes>(model)) {
    inputBytes = model;
    char* data = nullptr;
    Py_ssize_t size = 0;
    PyBytes_AsStringAndSize(inputBytes.ptr(), &data, &size);
    options.setInputModelFromBuffer({reinterpret_cast<const std::byte*>(data), static_cast<size_t>(size)});
  } else {
    options.setInputModelPath(py::str(model).cast<std::string>());
  }
  std::vector<std::byte> buffer;
  if (outputPath) {
    if (!outputPath->empty()) options.setOutputModelPath(*outputPath);  // "": the default <stem>_ctx.onnx
  } else {
    options.setOutputModelBuffer(&buffer);
  }
  Result<CompileResult> result = callInterruptibly(token, [&] { return compileModel(options); });
  progress->rethrow();
  const CompileResult compiled = valueOrThrow(std::move(result));
  py::object bytes = py::none();
  if (!outputPath) bytes = py::bytes(reinterpret_cast<const char*>(buffer.data()), buffer.size());
  return py::make_tuple(resultToPython(compiled), bytes);
}

}  // namespace

void bindCompile(py::module_& module) {
  py::class_<CompileRequestArgs>(module, "CompileArgs")
      .def(py::init<>())
      .def_readwrite("config", &CompileRequestArgs::config)
      .def_readwrite("input_shapes", &CompileRequestArgs::inputShapes)
      .def_readwrite("embed", &CompileRequestArgs::embed)
      .def_readwrite("external_initializers_file", &CompileRequestArgs::externalInitializersFile)
      .def_readwrite("external_initializers_threshold", &CompileRequestArgs::externalInitializersThreshold)
      .def_readwrite("flags", &CompileRequestArgs::flags)
      .def_readwrite("optimization_level", &CompileRequestArgs::optimizationLevel)
      .def_readwrite("target_profile", &CompileRequestArgs::targetProfile)
      .def_readwrite("node_name_prefix", &CompileRequestArgs::nodeNamePrefix)
      .def_readwrite("binary_directory", &CompileRequestArgs::binaryDirectory)
      .def_readwrite("binary_model_name", &CompileRequestArgs::binaryModelName);
  module.def("compile", &compile, py::arg("model"), py::arg("output_path"), py::arg("args"),
             py::arg("progress") = py::none(), py::arg("token") = nullptr);
}

}  // namespace kiln::python
