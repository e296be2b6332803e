// Comparing a model's results under two configurations ("sides"): per-tensor error metrics, every output of two
// runs, and the first node whose outputs diverge while its inputs agree (bisect), with a one-node reproducer.
#pragma once

#include "kiln/export.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kiln/session_options.h"
#include "kiln/status.h"
#include "kiln/tensor.h"
#include "kiln/value_metadata.h"

namespace kiln {

// An element passes when |x - ref| <= atol + rtol * |ref|, ref being the reference side's element. A tensor passes
// when at most maxFractionBeyond of its elements do not (Polygraphy's --check-error-stat idea: float16 storage puts
// a few pixels of a detection map beyond any element-wise tolerance); NaN/Inf mismatches always fail it. The
// default 0 asks every element to pass; values outside [0, 1) are the caller's to refuse (kiln compare does):
// NaN and negatives count as 0, 1 and above let every finite element be beyond.
struct KILN_EXPORT Tolerance {
  double atol = 1e-4;
  double rtol = 1e-3;
  double maxFractionBeyond = 0;
};

// The number of a tensor's `elements` that may be beyond `tolerance`: floor(maxFractionBeyond * elements), read
// so that a decimal fraction which is exactly k / elements allows k (0.29 of 100 allows 29).
KILN_EXPORT int64_t allowedBeyondTolerance(const Tolerance& tolerance, int64_t elements);

// The failing element with the largest excess over its tolerance (NaN/Inf mismatches first); when every element
// passes, the one with the largest absolute error.
struct KILN_EXPORT WorstElement {
  int64_t flatIndex = -1;      // -1 when there is no element to report
  std::vector<int64_t> index;  // the same position per dimension
  double value = 0;
  double reference = 0;
};

// |x - ref| over finite pairs is counted in fixed decade bins (TensorComparison::errorHistogram): bin 0 holds
// errors below 1e-10 (exact matches included), bin k in 1..12 holds [1e(k-11), 1e(k-10)), the last bin 1e2 and up.
inline constexpr int kErrorHistogramBins = 14;
// The smallest error bin `bin` holds: 0 for bin 0, 1e(bin-11) otherwise.
KILN_EXPORT double errorHistogramLowerEdge(int bin);
// The bin error `absError` (finite, >= 0) falls in.
KILN_EXPORT int errorHistogramBin(double absError);

// How one tensor compares with its reference. Integers and bools compare as their numeric values.
struct KILN_EXPORT TensorComparison {
  std::string name;
  DataType dtype = DataType::UNDEFINED, referenceDtype = DataType::UNDEFINED;
  Shape shape, referenceShape;
  bool missing = false;           // one side has no such tensor (nothing else is filled)
  bool dtypeMismatch = false;     // the element types differ (values are still compared when the shapes match)
  bool shapeMismatch = false;     // the shapes differ (no element is compared)
  bool unsupportedDtype = false;  // string, complex or undefined: not compared
  int64_t elements = 0;
  int64_t beyondTolerance = 0;  // elements that fail (NaN/Inf mismatches included)
  // How many elements may be beyond the tolerance with the tensor still passing: allowedBeyondTolerance of the
  // Tolerance compareTensors was given (0 by default: every element must pass).
  int64_t allowedBeyond = 0;
  double maxAbsError = 0, meanAbsError = 0;  // over finite pairs
  double maxRelError = 0;  // |x - ref| / |ref| over finite pairs with ref != 0
  double cosineSimilarity = 1;  // over finite pairs; 1 when both are all zero, 0 when only one is
  double fractionBeyondTolerance = 0;
  int64_t nanMismatches = 0;  // one side NaN, the other not (NaN against NaN is equal)
  int64_t infMismatches = 0;  // one side infinite and the other not the same infinity
  WorstElement worst;
  // Counts of |x - ref| per bin over finite pairs (kErrorHistogramBins entries); empty when nothing was compared.
  std::vector<int64_t> errorHistogram = {};

  // True when nothing mismatched, no NaN/Inf mismatched and at most allowedBeyond elements are beyond the
  // tolerance (with allowedBeyond 0: every element passed).
  bool passed() const {
    if (missing || dtypeMismatch || shapeMismatch || unsupportedDtype) return false;
    if (beyondTolerance == 0) return true;
    return nanMismatches == 0 && infMismatches == 0 && beyondTolerance <= allowedBeyond;
  }
};

// Compares `value` with `reference` element by element under `tolerance` (allowedBeyond from its
// maxFractionBeyond).
KILN_EXPORT TensorComparison compareTensors(const std::string& name, const Tensor& value, const Tensor& reference,
                                            const Tolerance& tolerance = {});

// Runs a model file on something other than a Kiln session (onnxruntime, ...): returns every graph output of the
// model at `modelPath` for `inputs`, in the model's output order. Must not throw.
using ExternalRunner =
    std::function<Result<std::vector<NamedTensor>>(const std::string& modelPath, const std::vector<NamedTensor>& inputs)>;

// One configuration: a model run by a Kiln session under `options`, or, when `runner` is set, by that runner.
struct KILN_EXPORT CompareSide {
  std::string label;      // how reports name the side: "vulkan", "cpu", "onnxruntime", a model file
  std::string modelPath;
  SessionOptions options;  // a Kiln side's session options (execution providers, config entries, input shapes)
  ExternalRunner runner;   // set for an external side
};

// Runs `side` once on `inputs` and returns every graph output, in the model's output order.
KILN_EXPORT Result<std::vector<NamedTensor>> runSide(const CompareSide& side, const std::vector<NamedTensor>& inputs);

// Every output of two runs, matched by name (an output only one side has is `missing`).
struct KILN_EXPORT ModelComparison {
  std::vector<TensorComparison> outputs;
  // True when every output passed.
  bool passed() const;
};

// Runs both sides on `inputs` and compares `side`'s outputs with `reference`'s.
KILN_EXPORT Result<ModelComparison> compareModels(const CompareSide& side, const CompareSide& reference,
                                                  const std::vector<NamedTensor>& inputs,
                                                  const Tolerance& tolerance = {});

// A node of the model and how its input and output values compare.
struct KILN_EXPORT NodeDivergence {
  std::string node;    // the node's name in the model (its first output's name when it has none)
  std::string opType;
  std::vector<TensorComparison> inputs;   // initializers and graph inputs included
  std::vector<TensorComparison> outputs;
};

// A node's outputs as compared by bisect.
struct KILN_EXPORT NodeComparison {
  std::string node;  // as NodeDivergence::node
  std::string opType;
  std::string graph = "main";  // "main", or "main/<If or Loop node>.<then_branch, else_branch or body>"
  std::vector<TensorComparison> outputs;
  // True when every output passed.
  bool passed() const;
};

struct KILN_EXPORT BisectOptions {
  int64_t maxValuesPerChunk = 64;            // intermediate values exposed per pair of runs
  int64_t maxChunkBytes = int64_t{512} << 20;  // their estimated size per side (from shape inference)
  bool stopAtFirstDivergence = true;         // false: compare every value (for per-node data)
  ProgressSink progress;                     // "bisect" steps (chunks) and cancellation
};

struct KILN_EXPORT BisectResult {
  // The first node, in topological order, whose outputs diverge while its computed inputs agree; none when no
  // compared value diverges.
  std::optional<NodeDivergence> firstDivergence;
  // Every node whose outputs were compared, in topological order.
  std::vector<NodeComparison> nodes;
  int64_t valuesCompared = 0;
  int64_t chunks = 0;
  int64_t nodesInSubgraphs = 0;  // nodes of bodies whose values cannot be exposed (Scan bodies, odd node outputs)
  int64_t valuesSkipped = 0;     // node outputs of unknown or non-tensor type, or absent from the other model
};

// Finds the first diverging node of side.modelPath by exposing its intermediate values as graph outputs on both
// sides, a chunk at a time, in a private temporary folder (removed afterwards). Values are matched by name: the
// reference side's model must compute them too (the same model, or a variant with the same node outputs).
KILN_EXPORT Result<BisectResult> bisectModels(const CompareSide& side, const CompareSide& reference,
                                              const std::vector<NamedTensor>& inputs, const Tolerance& tolerance = {},
                                              const BisectOptions& options = {});

// The files writeReproducer wrote.
struct KILN_EXPORT Reproducer {
  std::string modelPath;
  std::vector<std::string> inputNames, inputFiles;  // the model's graph inputs and their .npy files
  std::vector<std::string> outputNames, expectedOutputFiles;  // the reference side's outputs of the node
  std::string readmePath;
};

// Writes node `nodeName` of reference.modelPath as a one-node ONNX model (its initializers, attributes and the
// source's opsets) to DIR/model.onnx, with its inputs as the reference side computes them from `inputs` (.npy),
// the reference outputs (expected_*.npy) and README.txt (ending with `note`, e.g. the command that shows the
// divergence). DIR must be new or empty (INVALID_ARGUMENT otherwise).
KILN_EXPORT Result<Reproducer> writeReproducer(const CompareSide& reference, const std::string& nodeName,
                                               const std::vector<NamedTensor>& inputs, const std::string& dir,
                                               const std::string& note = {});

}  // namespace kiln
