// Kiln's own tools as plain Python data (dicts and lists): inspect, check, merge, devices, config keys.
// kiln/_tools.py shapes them into kiln.inspect / kiln.check / kiln.merge / kiln.devices.
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdio>
#include <span>
#include <string>

#include "bindings.h"
#include "kiln/compatibility.h"
#include "kiln/config_keys.h"
#include "kiln/context_binary.h"
#include "kiln/device.h"
#include "kiln/epcontext.h"
#include "kiln/log.h"
#include "kiln/model_info.h"
#include "kiln/provider_names.h"
#include "kiln/version.h"
#include "python_data.h"
#include "status_error.h"

namespace py = pybind11;

namespace kiln::python {
namespace {

std::span<const std::byte> spanOf(const py::bytes& bytes) {
  char* data = nullptr;
  Py_ssize_t size = 0;
  PyBytes_AsStringAndSize(bytes.ptr(), &data, &size);
  return {reinterpret_cast<const std::byte*>(data), static_cast<size_t>(size)};
}

py::dict inspectModel(const std::string& path) { return toPython(valueOrThrow(kiln::inspectModel(path))); }

py::dict inspectCtxModel(const py::object& model, const std::string& baseFolder) {
  if (py::isinstance<py::bytes>(model)) {
    return toPython(valueOrThrow(inspectEpContextModel(spanOf(model), baseFolder)));
  }
  return toPython(valueOrThrow(inspectEpContextModel(py::str(model).cast<std::string>())));
}

py::dict inspectBinary(const py::object& binary, const std::string& origin) {
  if (py::isinstance<py::bytes>(binary))
    return toPython(valueOrThrow(inspectContextBinary(spanOf(binary), origin)));
  return toPython(valueOrThrow(inspectContextBinary(py::str(binary).cast<std::string>())));
}

// onnxruntime's four states for a ctx model, a context binary or a plain model (path, or bytes whose file
// references resolve against `baseFolder`), against a profile when given, else live device `device`.
py::dict modelCompatibility(const py::object& model, const std::string& baseFolder, const std::string& device,
                            const std::string& profile, const std::string& source) {
  CompatibilityQuery query;
  query.deviceSelector = device;
  query.profilePath = profile;
  query.sourceModelPath = source;
  Result<ModelCompatibility> result = Status(StatusCode::FAIL, "not checked");
  if (py::isinstance<py::bytes>(model)) {
    const py::bytes bytes = model;
    const auto view = spanOf(bytes);
    py::gil_scoped_release release;
    result = getModelCompatibility(view, baseFolder, query);
  } else {
    const std::string path = py::str(model).cast<std::string>();
    py::gil_scoped_release release;
    result = getModelCompatibility(path, query);
  }
  return toPython(valueOrThrow(std::move(result)));
}

std::string compatibilityInfo(const py::object& model) {
  if (py::isinstance<py::bytes>(model)) return valueOrThrow(getCompatibilityInfoFromModel(spanOf(model)));
  return valueOrThrow(getCompatibilityInfoFromModel(py::str(model).cast<std::string>()));
}

py::dict merge(const std::vector<std::pair<std::string, std::string>>& inputs, const std::string& outputPath,
               const std::vector<std::pair<std::string, std::string>>& connections) {
  std::vector<MergeInput> mergeInputs;
  for (const auto& [path, prefix] : inputs) mergeInputs.push_back({path, prefix});
  Result<MergeResult> result = Status(StatusCode::FAIL, "not merged");
  {
    py::gil_scoped_release release;
    result = mergeEpContextModels(mergeInputs, outputPath, connections);
  }
  return toPython(valueOrThrow(std::move(result)));
}

py::list devices() {
  py::list result;
  for (const VulkanDeviceDescription& device : valueOrThrow(listVulkanDevices()))
    result.append(toPython(device));
  return result;
}

// onnxruntime's logger severities (0 verbose, 1 info, 2 warning, 3 error, 4 fatal) as the engine's minimum
// level; lines go to stderr from whatever thread logs them (no Python involved).
void setLogSeverity(int severity) {
  static constexpr LogLevel kLevels[] = {LogLevel::Debug, LogLevel::Info, LogLevel::Warn, LogLevel::Error,
                                         LogLevel::Off};
  const LogLevel level = kLevels[std::clamp(severity, 0, 4)];
  setLogSink(level, [](LogLevel, std::string_view message) {
    std::fprintf(stderr, "%.*s\n", static_cast<int>(message.size()), message.data());
  });
}

py::dict knownKeys() {
  py::dict result;
  for (const config::KeyInfo& key : config::knownKeys()) {
    result[py::str(key.key)] = py::make_tuple(key.defaultValue, key.meaning);
  }
  return result;
}

}  // namespace

void bindTools(py::module_& module) {
  module.def("inspect_model", &inspectModel, py::arg("path"));
  module.def("inspect_ctx_model", &inspectCtxModel, py::arg("model"), py::arg("base_folder") = "");
  module.def("inspect_binary", &inspectBinary, py::arg("binary"), py::arg("origin") = "<bytes>");
  module.def("model_compatibility", &modelCompatibility, py::arg("model"), py::arg("base_folder") = "",
             py::arg("device") = "", py::arg("profile") = "", py::arg("source") = "");
  module.def("compatibility_info", &compatibilityInfo, py::arg("model"));
  module.def("merge", &merge, py::arg("inputs"), py::arg("output_path"), py::arg("connections"));
  module.def("devices", &devices);
  module.def("device_profile", [](uint32_t index) { return valueOrThrow(vulkanDeviceProfile(index)); });
  module.def("known_config_keys", &knownKeys);
  module.def("set_log_severity", &setLogSeverity, py::arg("severity"));
  module.def("engine_version", [] { return std::string(engineVersion()); });
  module.attr("CPU_EXECUTION_PROVIDER") = kCpuExecutionProvider;
  module.attr("VULKAN_EXECUTION_PROVIDER") = kVulkanExecutionProvider;
}

}  // namespace kiln::python
