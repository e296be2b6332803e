// kiln_consumer MODEL.onnx: opens a session through an installed Kiln, prints its inputs and outputs, and runs it once
// on zero-filled inputs (symbolic dimensions set to 1). Output is line-oriented for run_consumer_test.sh to check.
#include <cstdio>
#include <string>
#include <vector>

// The umbrella header: every public header compiles from the installed package alone.
#include <kiln/kiln.h>

namespace {

std::string describe(const kiln::ValueMetadata& value) {
  std::string shape = "?";
  if (value.hasShape) {
    shape.clear();
    for (const kiln::Dimension& dim : value.shape) {
      if (!shape.empty()) shape += "x";
      shape += dim.isFixed() ? std::to_string(dim.value) : (dim.param.empty() ? "?" : dim.param);
    }
    if (shape.empty()) shape = "scalar";
  }
  return value.name + " " + kiln::dataTypeName(value.dtype) + " " + shape;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s MODEL.onnx\n", argv[0]);
    return 2;
  }
  std::printf("version %s\n", kiln::engineVersion());

  auto session = kiln::Session::create(argv[1]);
  if (!session.isOk()) {
    std::fprintf(stderr, "Session::create(%s) failed: %s\n", argv[1], session.status().toString().c_str());
    return 1;
  }
  std::vector<kiln::NamedTensor> feeds;
  for (const kiln::ValueMetadata& input : (*session)->inputs()) {
    std::printf("input %s\n", describe(input).c_str());
    kiln::Shape shape;
    for (const kiln::Dimension& dim : input.shape) shape.push_back(dim.isFixed() ? dim.value : 1);
    feeds.push_back({input.name, kiln::Tensor(input.dtype, shape)});
  }
  for (const kiln::ValueMetadata& output : (*session)->outputs()) {
    std::printf("output %s\n", describe(output).c_str());
  }

  auto results = (*session)->run(feeds);
  if (!results.isOk()) {
    std::fprintf(stderr, "Session::run failed: %s\n", results.status().toString().c_str());
    return 1;
  }
  for (const kiln::NamedTensor& result : *results) {
    std::printf("result %s %s %s\n", result.name.c_str(), kiln::dataTypeName(result.tensor.dtype()),
                kiln::shapeToString(result.tensor.shape()).c_str());
  }
  return 0;
}
