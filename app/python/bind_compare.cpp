// kiln.compare on kiln/compare.h: one model (or two) under two Kiln configurations on the same NumPy inputs, every
// output compared element by element; with bisect, the first node whose outputs diverge while its inputs agree.
// kiln/_tools.py maps onnxruntime's providers and SessionOptions onto the config entries given here.
#include <pybind11/stl.h>

#include <map>
#include <string>

#include "bindings.h"
#include "kiln/compare.h"
#include "numpy_values.h"
#include "status_error.h"

namespace py = pybind11;

namespace kiln::python {
namespace {

py::dict toPython(const TensorComparison& c) {
  py::dict d;
  d["name"] = c.name;
  d["dtype"] = std::string(dataTypeName(c.dtype));
  d["reference_dtype"] = std::string(dataTypeName(c.referenceDtype));
  d["shape"] = c.shape;
  d["reference_shape"] = c.referenceShape;
  d["passed"] = c.passed();
  d["missing"] = c.missing;
  d["dtype_mismatch"] = c.dtypeMismatch;
  d["shape_mismatch"] = c.shapeMismatch;
  d["unsupported_dtype"] = c.unsupportedDtype;
  d["elements"] = c.elements;
  d["beyond_tolerance"] = c.beyondTolerance;
  d["allowed_beyond"] = c.allowedBeyond;
  d["max_abs_error"] = c.maxAbsError;
  d["max_rel_error"] = c.maxRelError;
  d["mean_abs_error"] = c.meanAbsError;
  d["cosine_similarity"] = c.cosineSimilarity;
  d["fraction_beyond_tolerance"] = c.fractionBeyondTolerance;
  d["nan_mismatches"] = c.nanMismatches;
  d["inf_mismatches"] = c.infMismatches;
  d["abs_error_histogram"] = c.errorHistogram;  // kiln::errorHistogramBin's decade bins, as kiln compare --json
  d["worst"] = c.worst.flatIndex < 0 ? py::object(py::none())
                                      : py::object(py::dict(py::arg("index") = c.worst.index,
                                                            py::arg("flat_index") = c.worst.flatIndex,
                                                            py::arg("value") = c.worst.value,
                                                            py::arg("reference") = c.worst.reference));
  return d;
}

py::list toPython(const std::vector<TensorComparison>& comparisons) {
  py::list list;
  for (const auto& c : comparisons) list.append(toPython(c));
  return list;
}

py::dict compare(const std::string& model, const py::dict& feeds, const std::map<std::string, std::string>& config,
                 const std::string& referenceModel, const std::map<std::string, std::string>& referenceConfig,
                 double atol, double rtol, double maxFractionBeyond, bool bisect) {
  if (!(maxFractionBeyond >= 0 && maxFractionBeyond < 1)) {  // as kiln compare --max-fraction-beyond
    throwIfError(Status(StatusCode::INVALID_ARGUMENT, "max_fraction_beyond must be in [0, 1), got " +
                                                          std::to_string(maxFractionBeyond)));
  }
  std::vector<NamedTensor> inputs;
  for (const auto& [name, value] : feeds) {
    const std::string key = py::str(name).cast<std::string>();
    inputs.push_back({key, tensorFromPython(value, key)});
  }
  const CompareSide side{"side", model, sessionOptionsFrom(config, {}), {}};
  const CompareSide reference{"reference", referenceModel.empty() ? model : referenceModel,
                              sessionOptionsFrom(referenceConfig, {}), {}};
  Tolerance tolerance{atol, rtol};
  tolerance.maxFractionBeyond = maxFractionBeyond;
  Result<ModelComparison> outputs = Status(StatusCode::FAIL, "not compared");
  std::optional<Result<BisectResult>> bisected;
  {
    py::gil_scoped_release release;
    outputs = compareModels(side, reference, inputs, tolerance);
    if (bisect && outputs.isOk()) bisected = bisectModels(side, reference, inputs, tolerance);
  }
  const ModelComparison comparison = valueOrThrow(std::move(outputs));
  py::dict result;
  result["passed"] = comparison.passed();
  result["outputs"] = toPython(comparison.outputs);
  result["first_divergence"] = py::none();
  if (bisected) {
    const BisectResult found = valueOrThrow(std::move(*bisected));
    if (found.firstDivergence) {
      result["first_divergence"] = py::dict(py::arg("node") = found.firstDivergence->node,
                                            py::arg("op_type") = found.firstDivergence->opType,
                                            py::arg("inputs") = toPython(found.firstDivergence->inputs),
                                            py::arg("outputs") = toPython(found.firstDivergence->outputs));
    }
    result["values_compared"] = found.valuesCompared;
  }
  return result;
}

}  // namespace

void bindCompare(py::module_& module) {
  module.def("compare", &compare, py::arg("model"), py::arg("feeds"), py::arg("config"), py::arg("reference_model"),
             py::arg("reference_config"), py::arg("atol"), py::arg("rtol"), py::arg("max_fraction_beyond"), py::arg("bisect"));
}

}  // namespace kiln::python
