// Model packages from Python (kiln/model_package.h) as plain dicts: kiln.package_model, kiln.read_package and
// kiln.choose_package_variant in kiln/_tools.py. InferenceSession opens a package by path like any model.
#include <pybind11/stl.h>

#include "bindings.h"
#include "kiln/model_package.h"
#include "long_call.h"
#include "status_error.h"

namespace py = pybind11;

namespace kiln::python {
namespace {

py::list filesOf(const std::vector<PackageFile>& files) {
  py::list list;
  for (const auto& file : files) list.append(py::dict(py::arg("path") = file.path, py::arg("digest") = file.digest, py::arg("size") = file.size));
  return list;
}

py::dict packageDict(const ModelPackage& package) {
  py::list variants;
  for (const auto& variant : package.variants) {
    variants.append(py::dict(py::arg("name") = variant.name, py::arg("execution_provider") = variant.executionProvider,
                             py::arg("device") = variant.device, py::arg("profile") = variant.profile,
                             py::arg("precision") = variant.precision, py::arg("ctx_model") = variant.ctxModel,
                             py::arg("compile_identity") = variant.compileIdentity,
                             py::arg("compatibility_string") = variant.compatibilityInfo,
                             py::arg("files") = filesOf(variant.files), py::arg("session_options") = variant.sessionOptions));
  }
  return py::dict(py::arg("path") = package.path, py::arg("schema_version") = package.schemaVersion,
                  py::arg("component") = package.component, py::arg("source_model") = package.sourceModel,
                  py::arg("source_files") = filesOf(package.sourceFiles), py::arg("total_bytes") = package.totalBytes,
                  py::arg("shared_bytes") = package.sharedBytes, py::arg("variants") = variants);
}

py::dict packageModel(const std::string& source, const std::string& output, const std::vector<std::string>& profiles,
                      const std::vector<std::string>& precisions, bool overwrite,
                      const std::map<std::string, std::string>& config) {
  PackageOptions options;
  options.sourceModel = source;
  options.outputFolder = output;
  options.profiles = profiles;
  options.precisions = precisions;
  options.overwrite = overwrite;
  options.sessionOptions = sessionOptionsFrom(config, {});
  auto token = std::make_shared<CancellationToken>();
  options.sessionOptions.progress.cancellation = token;
  auto package = callInterruptibly(token, [&] { return kiln::packageModel(options); });
  return packageDict(valueOrThrow(std::move(package)));
}

py::dict choose(const std::string& path, const std::map<std::string, std::string>& config) {
  const ModelPackage package = valueOrThrow(readModelPackage(path));
  const SessionOptions options = sessionOptionsFrom(config, {});
  PackageChoice choice;
  {
    py::gil_scoped_release release;
    auto chosen = choosePackageVariant(package, options);
    py::gil_scoped_acquire acquire;
    choice = valueOrThrow(std::move(chosen));
  }
  py::list judged;
  for (const auto& j : choice.judged) {
    judged.append(py::dict(py::arg("variant") = j.variant, py::arg("compatibility") = compiledModelCompatibilityName(j.state),
                           py::arg("precision_matches") = j.precisionMatches, py::arg("reasons") = j.reasons));
  }
  py::object chosen = choice.chosen >= 0 ? py::object(py::str(package.variants[static_cast<size_t>(choice.chosen)].name)) : py::none();
  return py::dict(py::arg("variant") = chosen, py::arg("model") = choice.modelPath, py::arg("against") = choice.against,
                  py::arg("summary") = choice.summary, py::arg("judged") = judged);
}

}  // namespace

void bindPackage(py::module_& module) {
  module.def("package_model", &packageModel, py::arg("source"), py::arg("output"), py::arg("profiles"),
             py::arg("precisions"), py::arg("overwrite"), py::arg("config"));
  module.def("read_package", [](const std::string& path) { return packageDict(valueOrThrow(readModelPackage(path))); },
             py::arg("path"));
  module.def("choose_package_variant", &choose, py::arg("path"), py::arg("config"));
}

}  // namespace kiln::python
