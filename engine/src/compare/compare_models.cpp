// runSide and compareModels (kiln/compare.h): one run per side, outputs matched by name.
#include <set>

#include "kiln/compare.h"
#include "kiln/session.h"

namespace kiln {

Result<std::vector<NamedTensor>> runSide(const CompareSide& side, const std::vector<NamedTensor>& inputs) {
  if (side.runner) return side.runner(side.modelPath, inputs);
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::create(side.modelPath, side.options));
  std::vector<NamedTensor> fed;
  for (const auto& meta : session->inputs()) {
    for (const auto& input : inputs) {
      if (input.name == meta.name) fed.push_back(input);
    }
  }
  return session->run(fed);
}

Result<ModelComparison> compareModels(const CompareSide& side, const CompareSide& reference,
                                      const std::vector<NamedTensor>& inputs, const Tolerance& tolerance) {
  KILN_ASSIGN_OR_RETURN(std::vector<NamedTensor> values, runSide(side, inputs));
  KILN_ASSIGN_OR_RETURN(std::vector<NamedTensor> references, runSide(reference, inputs));
  ModelComparison comparison;
  std::set<std::string> seen;
  for (const auto& value : values) {
    Tensor referenceTensor;
    for (const auto& r : references) {
      if (r.name == value.name) referenceTensor = r.tensor;
    }
    comparison.outputs.push_back(compareTensors(value.name, value.tensor, referenceTensor, tolerance));
    seen.insert(value.name);
  }
  for (const auto& r : references) {
    if (!seen.count(r.name)) comparison.outputs.push_back(compareTensors(r.name, Tensor(), r.tensor, tolerance));
  }
  return comparison;
}

}  // namespace kiln
