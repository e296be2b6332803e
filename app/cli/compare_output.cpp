#include "compare_output.h"

#include <cstdio>

#include "shape_syntax.h"

namespace kiln::cli {
namespace {

std::string verdict(const TensorComparison& c) {
  if (c.missing) return "MISSING";
  if (c.shapeMismatch) return "SHAPE " + app::formatDims(c.shape) + " vs " + app::formatDims(c.referenceShape);
  if (c.unsupportedDtype) return std::string("NOT COMPARED (") + dataTypeName(c.dtype) + ")";
  std::string text = c.passed() ? "ok" : "FAIL";
  if (c.passed() && c.beyondTolerance > 0) {
    text += " (" + std::to_string(c.beyondTolerance) + " beyond, " + std::to_string(c.allowedBeyond) + " allowed)";
  }
  if (c.dtypeMismatch) text += std::string(" (dtype ") + dataTypeName(c.dtype) + " vs " + dataTypeName(c.referenceDtype) + ")";
  if (c.nanMismatches) text += " nan:" + std::to_string(c.nanMismatches);
  if (c.infMismatches) text += " inf:" + std::to_string(c.infMismatches);
  return text;
}

std::string worst(const TensorComparison& c) {
  if (c.worst.flatIndex < 0) return "-";
  std::string index = "[";
  for (size_t i = 0; i < c.worst.index.size(); ++i) index += (i ? "," : "") + std::to_string(c.worst.index[i]);
  char text[96];
  std::snprintf(text, sizeof text, "%s] %.9g vs %.9g", index.c_str(), c.worst.value, c.worst.reference);
  return text;
}

void printRow(const std::string& prefix, const TensorComparison& c) {
  std::printf("%s%-28s %-16s %10.3g %10.3g %10.3g %9.6f %8.4f%%  %-30s %s\n", prefix.c_str(), c.name.c_str(),
              app::formatDims(c.shape).c_str(), c.maxAbsError, c.maxRelError, c.meanAbsError, c.cosineSimilarity,
              100 * c.fractionBeyondTolerance, worst(c).c_str(), verdict(c).c_str());
}

}  // namespace

void printComparisonTable(const std::vector<TensorComparison>& comparisons) {
  std::printf("%-28s %-16s %10s %10s %10s %9s %9s  %-30s %s\n", "output", "shape", "max_abs", "max_rel", "mean_abs",
              "cosine", "beyond", "worst [index] value vs ref", "result");
  for (const auto& c : comparisons) printRow("", c);
}

void printFirstDivergence(const std::optional<NodeDivergence>& divergence) {
  if (!divergence) {
    std::printf("first divergence: none (every compared intermediate value is within tolerance)\n");
    return;
  }
  std::printf("first divergence: node '%s' (%s)\n", divergence->node.c_str(), divergence->opType.c_str());
  for (const auto& c : divergence->inputs) printRow("  in  ", c);
  for (const auto& c : divergence->outputs) printRow("  out ", c);
}

}  // namespace kiln::cli
