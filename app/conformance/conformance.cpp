#include "conformance.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <sstream>

#include "kiln/device.h"
#include "kiln/session.h"
#include "kiln/tensor_io.h"
#include "worker.h"

namespace kiln::conformance {
namespace fs = std::filesystem;

const char* outcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::Passed: return "passed";
    case Outcome::Failed: return "FAILED";
    case Outcome::ExpectedFailure: return "expected failure";
    case Outcome::UnexpectedPass: return "UNEXPECTED PASS";
    case Outcome::Skipped: return "skipped";
  }
  return "?";
}

std::map<std::string, std::string> parseExpectedFailures(const std::string& text) {
  std::map<std::string, std::string> list;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    line = line.substr(0, line.find('#'));
    const size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos) continue;
    const size_t end = line.find_first_of(" \t", start);
    std::string name = line.substr(start, end == std::string::npos ? std::string::npos : end - start);
    std::string reason = end == std::string::npos ? "" : line.substr(end);
    const size_t reasonStart = reason.find_first_not_of(" \t");
    reason = reasonStart == std::string::npos ? "no reason given" : reason.substr(reasonStart);
    list[name] = reason;
  }
  return list;
}

namespace {

double valueAt(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::FLOAT: return t.data<float>()[i];
    case DataType::DOUBLE: return t.data<double>()[i];
    case DataType::FLOAT16: return static_cast<float>(t.data<Float16>()[i]);
    case DataType::BFLOAT16: return static_cast<float>(t.data<BFloat16>()[i]);
    case DataType::INT8: return t.data<int8_t>()[i];
    case DataType::UINT8: return t.data<uint8_t>()[i];
    case DataType::INT16: return t.data<int16_t>()[i];
    case DataType::UINT16: return t.data<uint16_t>()[i];
    case DataType::INT32: return t.data<int32_t>()[i];
    case DataType::UINT32: return t.data<uint32_t>()[i];
    case DataType::INT64: return static_cast<double>(t.data<int64_t>()[i]);
    case DataType::UINT64: return static_cast<double>(t.data<uint64_t>()[i]);
    case DataType::BOOL: return t.data<bool>()[i] ? 1 : 0;
    default: return 0;
  }
}

bool exactType(DataType type) {
  return type == DataType::INT64 || type == DataType::UINT64 || type == DataType::INT32 || type == DataType::UINT32;
}

std::string formatDouble(double v) {
  std::ostringstream out;
  out.precision(9);
  out << v;
  return out.str();
}

}  // namespace

std::string compareTensors(const Tensor& actual, const Tensor& expected, double rtol, double atol) {
  if (actual.dtype() != expected.dtype()) {
    return std::string("dtype ") + dataTypeName(actual.dtype()) + ", expected " + dataTypeName(expected.dtype());
  }
  if (actual.shape() != expected.shape()) {
    return "shape " + shapeToString(actual.shape()) + ", expected " + shapeToString(expected.shape());
  }
  const int64_t n = expected.numel();
  if (expected.dtype() == DataType::STRING) {
    for (int64_t i = 0; i < n; ++i) {
      if (actual.strings()[i] != expected.strings()[i]) {
        return "element " + std::to_string(i) + " is '" + actual.strings()[i] + "', expected '" +
               expected.strings()[i] + "'";
      }
    }
    return {};
  }
  int64_t mismatches = 0, first = -1;
  double worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    bool ok;
    if (exactType(expected.dtype())) {
      // Compare 64-bit integers exactly: doubles would hide differences above 2^53.
      ok = std::memcmp(static_cast<const char*>(actual.rawData()) + i * dataTypeSize(expected.dtype()),
                       static_cast<const char*>(expected.rawData()) + i * dataTypeSize(expected.dtype()),
                       dataTypeSize(expected.dtype())) == 0;
    } else {
      const double a = valueAt(actual, i), e = valueAt(expected, i);
      if (std::isnan(e) || std::isnan(a)) {
        ok = std::isnan(e) && std::isnan(a);
      } else if (std::isinf(e) || std::isinf(a)) {
        ok = a == e;
      } else {
        ok = std::fabs(a - e) <= atol + rtol * std::fabs(e);
        worst = std::max(worst, std::fabs(a - e));
      }
    }
    if (!ok && mismatches++ == 0) first = i;
  }
  if (mismatches == 0) return {};
  return std::to_string(mismatches) + " of " + std::to_string(n) + " elements differ; first at " +
         std::to_string(first) + ": " + formatDouble(valueAt(actual, first)) + ", expected " +
         formatDouble(valueAt(expected, first)) + " (max abs error " + formatDouble(worst) + ")";
}

namespace {

std::vector<fs::path> sortedFiles(const fs::path& folder, const std::string& prefix) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && entry.path().extension() == ".pb") files.push_back(entry.path());
  }
  // input_10.pb sorts after input_9.pb.
  std::sort(files.begin(), files.end(), [&](const fs::path& a, const fs::path& b) {
    auto index = [&](const fs::path& p) { return std::stoi(p.stem().string().substr(prefix.size())); };
    return index(a) < index(b);
  });
  return files;
}

// ONNX 1.12's test data stores bfloat16 tensors as uint16 bit patterns (data_type 4); read them as bfloat16
// where the model or the actual output says bfloat16.
Tensor asBFloat16IfStoredAsUInt16(Tensor tensor, DataType wanted) {
  if (wanted != DataType::BFLOAT16 || tensor.dtype() != DataType::UINT16) return tensor;
  Tensor converted(DataType::BFLOAT16, tensor.shape());
  std::memcpy(converted.rawData(), tensor.rawData(), tensor.byteSize());
  return converted;
}

// One line for a multi-line engine message (lists of nodes).
std::string oneLine(std::string text) {
  for (size_t pos = 0; (pos = text.find("\n", pos)) != std::string::npos;) {
    const size_t end = text.find_first_not_of(' ', pos + 1);
    text.replace(pos, (end == std::string::npos ? text.size() : end) - pos, pos > 0 && text[pos - 1] == ':' ? " " : "; ");
  }
  return text;
}

// Compares values of any kind: kinds, presence (optionals), lengths (sequences), then tensor by tensor.
std::string compareValues(const Value& actual, const Value& expected, double rtol, double atol) {
  if (actual.kind() != expected.kind()) {
    return std::string("a ") + valueKindName(actual.kind()) + ", expected a " + valueKindName(expected.kind());
  }
  if (expected.isTensor()) {
    const Tensor wanted = asBFloat16IfStoredAsUInt16(expected.tensor(), actual.tensor().dtype());
    return compareTensors(actual.tensor(), wanted, rtol, atol);
  }
  if (expected.isOptional()) {
    if (actual.hasElement() != expected.hasElement()) {
      return actual.hasElement() ? "an optional holding a value, expected None" : "None, expected a value";
    }
    return expected.hasElement() ? compareValues(actual.element(), expected.element(), rtol, atol) : std::string();
  }
  const auto& a = actual.tensors();
  const auto& e = expected.tensors();
  if (a.size() != e.size()) {
    return "a sequence of " + std::to_string(a.size()) + " tensors, expected " + std::to_string(e.size());
  }
  for (size_t i = 0; i < e.size(); ++i) {
    const std::string diff = compareTensors(a[i], asBFloat16IfStoredAsUInt16(e[i], a[i].dtype()), rtol, atol);
    if (!diff.empty()) return "sequence element " + std::to_string(i) + ": " + diff;
  }
  return {};
}

// Runs the case; returns "" on a match, else the mismatch. Sets `skipped` when the EP cannot take every node.
std::string runCaseChecked(const fs::path& folder, const Options& options, bool& skipped) {
  SessionOptions sessionOptions;
  const bool cpu = options.executionProvider == "cpu";
  (void)sessionOptions.addConfigEntry("kiln.execution_providers", cpu ? "cpu" : options.executionProvider + ",cpu");
  (void)sessionOptions.addConfigEntry("kiln.intra_op_num_threads", "1");
  for (const auto& [key, value] : options.configEntries) {
    if (Status s = sessionOptions.addConfigEntry(key, value); !s.isOk()) return s.toString();
  }
  // A case counts for an EP only when the EP runs all of it (issue 3's bar); otherwise it is skipped.
  if (!cpu) (void)sessionOptions.addConfigEntry("session.disable_cpu_ep_fallback", "1");
  auto session = Session::create((folder / "model.onnx").string(), sessionOptions);
  if (!cpu && session.status().code() == StatusCode::FAIL &&
      session.status().message().find("disable_cpu_ep_fallback") != std::string::npos) {
    skipped = true;
    return oneLine(session.status().message());
  }
  if (!session.isOk()) return "session: " + session.status().toString();
  if (!cpu && compiledPartitionCount((*session)->partitionReport()) == 0) {
    // Constant folding can leave nothing to run (every input a constant): that proves nothing about the EP.
    skipped = true;
    return "no node is left for the " + options.executionProvider + " EP after graph optimization";
  }
  const fs::path data = folder / "test_data_set_0";
  const auto inputFiles = sortedFiles(data, "input_");
  const auto outputFiles = sortedFiles(data, "output_");
  const auto& declaredInputs = (*session)->inputs();

  const auto& declaredOutputs = (*session)->outputs();

  // Sequence and optional data are SequenceProto/OptionalProto files: the declared kind says which to parse.
  std::vector<NamedValue> inputs;
  for (size_t i = 0; i < inputFiles.size(); ++i) {
    std::string name;
    const ValueKind kind = i < declaredInputs.size() ? declaredInputs[i].kind : ValueKind::TENSOR;
    auto value = readValueProtoFile(inputFiles[i].string(), kind, &name);
    if (!value.isOk()) return "input: " + value.status().toString();
    if (name.empty() && i < declaredInputs.size()) name = declaredInputs[i].name;
    const DataType declared = i < declaredInputs.size() ? declaredInputs[i].dtype : DataType::UNDEFINED;
    Value input = std::move(value).value();
    if (input.isTensor()) input = asBFloat16IfStoredAsUInt16(input.tensor(), declared);
    inputs.push_back({name, std::move(input)});
  }
  auto outputs = (*session)->runValues(inputs);
  if (!outputs.isOk()) return "run: " + outputs.status().toString();
  if (outputs->size() != outputFiles.size()) {
    return std::to_string(outputs->size()) + " outputs, expected " + std::to_string(outputFiles.size());
  }
  for (size_t i = 0; i < outputFiles.size(); ++i) {
    std::string name;
    const ValueKind kind = i < declaredOutputs.size() ? declaredOutputs[i].kind : ValueKind::TENSOR;
    auto expected = readValueProtoFile(outputFiles[i].string(), kind, &name);
    if (!expected.isOk()) return "expected output: " + expected.status().toString();
    const NamedValue& actual = (*outputs)[i];
    if (!name.empty() && name != actual.name) return "output " + std::to_string(i) + " is named '" + actual.name + "', expected '" + name + "'";
    const std::string diff = compareValues(actual.value, *expected, options.rtol, options.atol);
    if (!diff.empty()) return "output '" + actual.name + "': " + diff;
  }
  return {};
}

}  // namespace

CaseRun runCase(const std::string& caseDirectory, const Options& options) {
  bool skipped = false;
  std::string detail = runCaseChecked(fs::path(caseDirectory), options, skipped);
  if (skipped) return {Outcome::Skipped, std::move(detail)};
  return {detail.empty() ? Outcome::Passed : Outcome::Failed, std::move(detail)};
}

Result<Summary> runConformance(const Options& options) {
  std::error_code ec;
  if (!fs::is_directory(options.directory, ec)) {
    return Status(StatusCode::NO_SUCHFILE, "conformance folder '" + options.directory + "' does not exist");
  }
  std::optional<std::regex> filter;
  try {
    if (!options.filter.empty()) filter.emplace(options.filter, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return Status(StatusCode::INVALID_ARGUMENT, "bad --filter regex '" + options.filter + "': " + e.what());
  }
  // KILN_REQUIRE_VULKAN=1 (CI): no Vulkan device is an error, not hundreds of skipped cases.
  const char* requireVulkan = std::getenv("KILN_REQUIRE_VULKAN");
  if (options.executionProvider == "vulkan" && requireVulkan && std::string(requireVulkan) == "1") {
    auto devices = listVulkanDevices();
    if (!devices.isOk() || devices->empty()) {
      return Status(StatusCode::EP_FAIL, "KILN_REQUIRE_VULKAN=1 and there is no Vulkan device" +
                                             (devices.isOk() ? std::string() : ": " + devices.status().toString()));
    }
  }
  std::vector<fs::path> cases;
  for (const auto& entry : fs::directory_iterator(options.directory, ec)) {
    if (!fs::exists(entry.path() / "model.onnx")) continue;
    const std::string name = entry.path().filename().string();
    if (filter && !std::regex_search(name, *filter)) continue;
    cases.push_back(entry.path());
  }
  std::sort(cases.begin(), cases.end());

  Summary summary;
  const auto total = static_cast<int64_t>(cases.size());
  if (options.onProgress) options.onProgress({"conformance cases", 0, total});
  // Counts one case's run against the expected failures.
  auto record = [&](size_t index, const CaseRun& run, double milliseconds) {
    CaseResult result;
    result.name = cases[index].filename().string();
    result.milliseconds = milliseconds;
    auto listed = options.expectedFailures.find(result.name);
    if (run.outcome == Outcome::Skipped) {
      result.outcome = Outcome::Skipped;
      result.detail = run.detail;
    } else if (run.outcome == Outcome::Passed) {
      result.outcome = listed == options.expectedFailures.end() ? Outcome::Passed : Outcome::UnexpectedPass;
      if (listed != options.expectedFailures.end()) result.detail = "listed as expected failure: " + listed->second;
    } else if (listed != options.expectedFailures.end()) {
      result.outcome = Outcome::ExpectedFailure;
      result.detail = listed->second;
    } else {
      result.outcome = Outcome::Failed;
      result.detail = run.detail;
    }
    switch (result.outcome) {
      case Outcome::Passed: ++summary.passed; break;
      case Outcome::ExpectedFailure: ++summary.expectedFailures; break;
      case Outcome::Skipped: ++summary.skipped; break;
      case Outcome::Failed: case Outcome::UnexpectedPass: ++summary.failed; break;
    }
    if (options.onCase) options.onCase(result);
    summary.cases.push_back(std::move(result));
    if (options.onProgress) options.onProgress({"conformance cases", static_cast<int64_t>(summary.cases.size()), total});
  };
  if (options.isolate) {
    std::vector<std::string> directories;
    for (const auto& folder : cases) directories.push_back(folder.string());
    KILN_RETURN_IF_ERROR(runInWorkers(directories, options, record));
  } else {
    for (size_t i = 0; i < cases.size(); ++i) {
      const auto start = std::chrono::steady_clock::now();
      const CaseRun run = runCase(cases[i].string(), options);
      record(i, run, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
  }
  return summary;
}

}  // namespace kiln::conformance
