// _kiln.Session and _kiln.RunOptions: the native half of kiln.InferenceSession (kiln/_session.py is the
// other).
#include <pybind11/stl.h>

#include <memory>
#include <span>
#include <string>

#include "bindings.h"
#include "kiln/io_binding.h"
#include "kiln/run_options.h"
#include "kiln/session.h"
#include "long_call.h"
#include "numpy_values.h"
#include "python_data.h"
#include "status_error.h"

namespace py = pybind11;

namespace kiln::python {
namespace {

// A session and the progress bridge its creation used (kept alive with it: the session may hold the sink).
struct SessionHandle {
  std::shared_ptr<PythonProgress>
      progress;  // declared first: destroyed after the session that holds its sink
  std::unique_ptr<Session> session;
};

py::list metadataListToPython(const std::vector<ValueMetadata>& values) {
  py::list result;
  for (const ValueMetadata& meta : values) result.append(toPython(meta));
  return result;
}

std::span<const std::byte> bytesView(const py::bytes& bytes) {
  char* data = nullptr;
  Py_ssize_t size = 0;
  PyBytes_AsStringAndSize(bytes.ptr(), &data, &size);
  return {reinterpret_cast<const std::byte*>(data), static_cast<size_t>(size)};
}

std::unique_ptr<SessionHandle> createSession(const py::object& model,
                                             const std::map<std::string, std::string>& config,
                                             const std::map<std::string, std::vector<int64_t>>& inputShapes,
                                             py::object progressCallback,
                                             std::shared_ptr<CancellationToken> token) {
  SessionOptions options = sessionOptionsFrom(config, inputShapes);
  if (!token) token = std::make_shared<CancellationToken>();
  auto handle = std::make_unique<SessionHandle>();
  handle->progress = std::make_shared<PythonProgress>(std::move(progressCallback), token);
  options.progress = handle->progress->sink();
  Result<std::unique_ptr<Session>> created = Status(StatusCode::FAIL, "not created");
  if (py::isinstance<py::bytes>(model)) {
    const py::bytes bytes = model;  // holds the bytes while the worker reads them
    const std::span<const std::byte> view = bytesView(bytes);
    created = callInterruptibly(token, [&] { return Session::create(view, options); });
  } else {
    const std::string path = py::str(model).cast<std::string>();
    created = callInterruptibly(token, [&] { return Session::create(path, options); });
  }
  handle->progress->rethrow();
  handle->session = valueOrThrow(std::move(created));
  return handle;
}

py::list run(SessionHandle& handle, const py::dict& feeds, const std::vector<std::string>& outputNames,
             const RunOptions* runOptions) {
  Session& session = *handle.session;
  std::vector<NamedValue> inputs;
  for (const auto& [key, object] : feeds) {
    const std::string name = py::str(key).cast<std::string>();
    ValueMetadata meta;
    meta.name = name;
    for (const ValueMetadata& declared : session.inputs()) {
      if (declared.name == name) meta = declared;
    }
    inputs.push_back({name, valueFromPython(object, meta)});
  }
  RunOptions options = runOptions ? *runOptions : RunOptions();  // copies share the terminate flag
  options.setOutputNames(outputNames);
  Result<std::vector<NamedValue>> outputs = Status(StatusCode::FAIL, "not run");
  {
    py::gil_scoped_release release;
    outputs = session.runValues(inputs, options);
    if (outputs.isOk()) {
      // An output that is an input's storage (Identity, a reshape) is copied: a caller's array never aliases
      // another, as in onnxruntime.
      for (NamedValue& output : outputs.value()) {
        for (const NamedValue& input : inputs) {
          if (output.value.isTensor() && output.value.tensor().sharesStorageWith(input.value.tensor())) {
            output.value = Value(output.value.tensor().clone());
          }
        }
      }
    }
    inputs.clear();
  }
  py::list result;
  for (const NamedValue& output : valueOrThrow(std::move(outputs)))
    result.append(valueToPython(output.value));
  return result;
}

void runWithBinding(SessionHandle& handle, IoBinding& binding, const RunOptions* runOptions) {
  const RunOptions options = runOptions ? *runOptions : RunOptions();
  Status status;
  {
    py::gil_scoped_release release;
    status = handle.session->runWithBinding(binding, options);
  }
  throwIfError(status);
}

py::dict transfersToPython(const Session& session) {
  const TransferCounters transfers = session.transfers();
  py::dict result;
  result["host_to_device_bytes"] = transfers.hostToDeviceBytes;
  result["device_to_host_bytes"] = transfers.deviceToHostBytes;
  return result;
}

py::dict timingsToPython(const Session& session) {
  py::dict timings, counters;
  forEachTiming(session.timings(),
                [&](std::string_view key, double value) { timings[py::str(key)] = value; });
  forEachCounter(session.counters(),
                 [&](std::string_view key, int64_t value) { counters[py::str(key)] = value; });
  py::dict result;
  result["timings"] = timings;
  result["counters"] = counters;
  return result;
}

py::dict profileToPython(const RunProfile& profile) {
  py::list nodes;
  for (const NodeTiming& node : profile.nodes) {
    py::dict entry;
    entry["node"] = node.node;
    entry["op_type"] = node.opType;
    entry["graph"] = node.graph;
    entry["execution_provider"] = node.executionProvider;
    entry["total_ms"] = node.totalMs;
    entry["start_ms"] = node.startMs;
    entry["calls"] = node.calls;
    entry["fused_into"] = node.fusedInto;
    entry["covers"] = node.covers;
    entry["covered_ms"] = node.coveredMs;
    entry["covered_start_ms"] = node.coveredStartMs;
    nodes.append(entry);
  }
  py::dict result;
  result["run_ms"] = profile.runMs;
  result["nodes"] = nodes;
  return result;
}

py::list partitionsToPython(const Session& session) {
  py::list result;
  for (const PartitionSummary& partition : session.partitions()) {
    py::dict entry;
    entry["name"] = partition.name;
    entry["execution_provider"] = partition.executionProvider;
    entry["node_count"] = partition.nodeCount;
    result.append(entry);
  }
  return result;
}

}  // namespace

SessionOptions sessionOptionsFrom(const std::map<std::string, std::string>& config,
                                  const std::map<std::string, std::vector<int64_t>>& inputShapes) {
  SessionOptions options;
  for (const auto& [key, value] : config) throwIfError(options.addConfigEntry(key, value));
  for (const auto& [name, dims] : inputShapes) options.setInputShape(name, dims);
  return options;
}

void bindSession(py::module_& module) {
  module.def(
      "check_config_entry",
      [](const std::string& key, const std::string& value) {
        throwIfError(SessionOptions().addConfigEntry(key, value));
      },
      py::arg("key"), py::arg("value"));
  py::class_<CancellationToken, std::shared_ptr<CancellationToken>>(module, "CancellationToken")
      .def(py::init<>())
      .def("cancel", &CancellationToken::cancel)
      .def("reset", &CancellationToken::reset)
      .def_property_readonly("cancelled", &CancellationToken::isCancelled);

  py::class_<RunOptions>(module, "RunOptions")
      .def(py::init<>())
      .def("copy",
           [](const RunOptions& options) { return RunOptions(options); })  // shares the terminate flag
      .def("set_terminate", &RunOptions::setTerminate)
      .def("unset_terminate", &RunOptions::unsetTerminate)
      .def_property_readonly("terminate_requested", &RunOptions::terminateRequested)
      .def_property("tag", &RunOptions::tag,
                    [](RunOptions& options, std::string tag) { options.setTag(std::move(tag)); })
      .def_property("profiling", &RunOptions::profiling,
                    [](RunOptions& options, bool enabled) { options.setProfiling(enabled); });

  py::class_<SessionHandle>(module, "Session")
      .def_static("create", &createSession, py::arg("model"), py::arg("config"), py::arg("input_shapes"),
                  py::arg("progress") = py::none(), py::arg("token") = nullptr)
      .def("inputs", [](const SessionHandle& h) { return metadataListToPython(h.session->inputs()); })
      .def("outputs", [](const SessionHandle& h) { return metadataListToPython(h.session->outputs()); })
      .def("run", &run, py::arg("feeds"), py::arg("output_names"), py::arg("run_options") = nullptr)
      .def("run_with_binding", &runWithBinding, py::arg("binding"), py::arg("run_options") = nullptr)
      .def("transfers", [](const SessionHandle& h) { return transfersToPython(*h.session); })
      .def("timings", [](const SessionHandle& h) { return timingsToPython(*h.session); })
      .def("partitions", [](const SessionHandle& h) { return partitionsToPython(*h.session); })
      .def("last_run_profile",
           [](const SessionHandle& h) { return profileToPython(h.session->lastRunProfile()); });
}

}  // namespace kiln::python
