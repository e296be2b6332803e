#include "compare_job.h"

#include <QFile>

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "compare_json.h"
#include "kiln/config_keys.h"
#include "kiln/model_info.h"
#include "kiln/session.h"
#include "model_inputs.h"
#include "node_data.h"
#include "session_flags.h"
#include "shape_syntax.h"

namespace kiln::bridge {

namespace {

QString qs(const std::string& text) { return QString::fromStdString(text); }

// A number as compare_json writes it: a JSON number, or "nan" / "inf" / "-inf".
double number(const nlohmann::json& value, double fallback = 0) {
  if (value.is_number()) return value.get<double>();
  if (value.is_string()) {
    const std::string text = value.get<std::string>();
    if (text == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (text == "inf") return std::numeric_limits<double>::infinity();
    if (text == "-inf") return -std::numeric_limits<double>::infinity();
  }
  return fallback;
}

// One output row from tensorComparisonToJson's fields (the CLI's --json and this panel read the same).
OutputRow outputRow(const nlohmann::json& entry) {
  OutputRow row;
  row.name = qs(entry.value("name", std::string()));
  row.passed = entry.value("passed", false);
  row.dtype = qs(entry.value("dtype", std::string()));
  if (entry.contains("shape") && entry["shape"].is_array()) {
    QStringList dims;
    for (const auto& d : entry["shape"]) dims << (d.is_number() ? QString::number(d.get<int64_t>()) : QStringLiteral("?"));
    row.shape = dims.join(QLatin1Char('x'));
  }
  if (entry.value("missing", false)) row.problem = QStringLiteral("missing");
  else if (entry.value("shape_mismatch", false)) row.problem = QStringLiteral("shape mismatch");
  else if (entry.value("dtype_mismatch", false)) row.problem = QStringLiteral("dtype mismatch");
  else if (entry.value("unsupported_dtype", false)) row.problem = QStringLiteral("unsupported type");
  row.maxAbsError = number(entry.value("max_abs_error", nlohmann::json()));
  row.maxRelError = number(entry.value("max_rel_error", nlohmann::json()));
  row.meanAbsError = number(entry.value("mean_abs_error", nlohmann::json()));
  row.cosineSimilarity = number(entry.value("cosine_similarity", nlohmann::json()), 1);
  row.fractionBeyond = number(entry.value("fraction_beyond_tolerance", nlohmann::json()));
  row.elements = entry.value("elements", int64_t{0});
  row.beyondTolerance = entry.value("beyond_tolerance", int64_t{0});
  return row;
}

// The name and op type in a node label ("'conv1' (Conv)"); an empty name for an unnamed node ("(Conv)").
std::pair<QString, QString> nameAndOpType(const std::string& label) {
  const size_t split = label.rfind("' (");
  if (label.size() < 5 || label.front() != '\'' || split == std::string::npos || split == 0 || label.back() != ')') {
    return {};
  }
  return {qs(label.substr(1, split - 1)), qs(label.substr(split + 3, label.size() - split - 4))};
}

// A profiled partition that measured its nodes' device times (details covers + covered_ms of equal length): one
// time_ms row per covered node that has a name, so the overlay colours the partition's nodes. Empty otherwise.
QList<NodeMetricRow> coveredRows(const app::NodeDatum& datum, const QString& executionProvider) {
  QList<NodeMetricRow> rows;
  if (!datum.details.is_object() || !datum.details.contains("covers") || !datum.details.contains("covered_ms")) return rows;
  const nlohmann::json& covers = datum.details["covers"];
  const nlohmann::json& ms = datum.details["covered_ms"];
  if (!covers.is_array() || !ms.is_array() || covers.size() != ms.size()) return rows;
  for (size_t i = 0; i < covers.size(); ++i) {
    if (!covers[i].is_string() || !ms[i].is_number()) continue;
    auto [name, opType] = nameAndOpType(covers[i].get<std::string>());
    if (name.isEmpty()) continue;  // the overlay finds nodes by name
    NodeMetricRow row;
    row.node = name;
    row.opType = opType;
    row.graph = qs(datum.graph);
    row.metrics.insert(QStringLiteral("time_ms"), ms[i].get<double>());
    row.executionProvider = executionProvider;
    rows << row;
  }
  return rows;
}

NodeMetrics nodeMetrics(const app::NodeData& data) {
  NodeMetrics metrics;
  metrics.kind = qs(data.kind);
  metrics.model = qs(data.model);
  metrics.modelHash = qs(data.modelHash);
  metrics.modelSourceHash = qs(data.modelSourceHash);
  for (const auto& datum : data.nodes) {
    NodeMetricRow row;
    row.node = qs(datum.node);
    row.opType = qs(datum.opType);
    row.graph = qs(datum.graph);
    for (const auto& [name, value] : datum.metrics) row.metrics.insert(qs(name), value);
    row.firstDivergence = datum.details.is_object() && datum.details.value("first_divergence", false);
    if (datum.details.is_object() && datum.details.contains("execution_provider") &&
        datum.details["execution_provider"].is_string()) {
      row.executionProvider = qs(datum.details["execution_provider"].get<std::string>());
    }
    if (datum.details.is_object() && datum.details.contains("abs_error_histogram")) {
      const nlohmann::json& bins = datum.details["abs_error_histogram"];
      if (bins.is_array() && bins.size() == static_cast<size_t>(kErrorHistogramBins)) {
        for (const auto& count : bins) row.errorHistogram << (count.is_number() ? count.get<qint64>() : 0);
      }
    }
    // A partition whose nodes carry their own device times is replaced by them: its wall time, larger than any of
    // theirs, would otherwise set the top of the colour scale.
    const QList<NodeMetricRow> covered = coveredRows(datum, row.executionProvider);
    if (!covered.isEmpty()) {
      metrics.nodes << covered;
      continue;
    }
    metrics.nodes << row;
  }
  return metrics;
}

// The "NAME=DIMS" entries of a request's shapes field by input name, for app::prepareInputs.
Result<std::map<std::string, Shape>> shapesByName(const QStringList& entries) {
  std::map<std::string, Shape> shapes;
  for (const QString& entry : entries) {
    KILN_ASSIGN_OR_RETURN(app::NamedShape parsed, app::parseNamedShape(entry.toStdString()));
    shapes[parsed.name] = parsed.dims;
  }
  return shapes;
}

Result<CompareSide> kilnSide(const CompareConfig& config, const QStringList& shapes) {
  CompareSide side;
  side.modelPath = config.modelPath.toStdString();
  side.label = config.label.isEmpty() ? config.providers.toStdString() : config.label.toStdString();
  KILN_RETURN_IF_ERROR(app::applyExecutionProviders(config.providers.toStdString(), side.options));
  std::vector<std::string> entries;
  for (const QString& entry : shapes) entries.push_back(entry.toStdString());
  auto applied = app::applyShapeEntries(entries, side.options);
  if (!applied.isOk()) return applied.status().withContext("input shapes");
  return side;
}

Result<CompareResults> runComparison(const CompareRequest& request, const ProgressSink& sink) {
  KILN_ASSIGN_OR_RETURN(CompareSide side, kilnSide(request.side, request.shapes));
  KILN_ASSIGN_OR_RETURN(CompareSide reference, kilnSide(request.reference, request.shapes));
  side.options.progress.cancellation = sink.cancellation;
  reference.options.progress.cancellation = sink.cancellation;
  sink.report("inputs", 0, 1);
  KILN_ASSIGN_OR_RETURN(ModelInfo declared, inspectModel(side.modelPath));
  KILN_ASSIGN_OR_RETURN(auto shapes, shapesByName(request.shapes));
  // The inputs `kiln compare` would feed for the same shapes and seed.
  KILN_ASSIGN_OR_RETURN(auto inputs, app::prepareInputs(declared.inputs, {}, shapes, "", request.seed));
  if (sink.cancelled()) return Status(StatusCode::CANCELLED, "cancelled");
  sink.report("run", 0, 1);
  KILN_ASSIGN_OR_RETURN(ModelComparison comparison, compareModels(side, reference, inputs, request.tolerance));
  sink.report("run", 1, 1);
  if (sink.cancelled()) return Status(StatusCode::CANCELLED, "cancelled");
  CompareResults results;
  results.sideLabel = qs(side.label);
  results.referenceLabel = qs(reference.label);
  for (const auto& output : comparison.outputs) results.outputs << outputRow(app::tensorComparisonToJson(output));
  if (!request.perNode) return results;
  BisectOptions options;
  options.stopAtFirstDivergence = false;  // every node: the overlay colours them all
  options.progress = sink;
  auto scanned = bisectModels(side, reference, inputs, request.tolerance, options);
  if (!scanned.isOk()) {
    if (scanned.status().code() == StatusCode::CANCELLED) return scanned.status();
    results.perNodeProblem = QString::fromStdString(scanned.status().toString());  // the outputs still stand
    return results;
  }
  const BisectResult& bisect = *scanned;
  results.nodes = nodeMetrics(app::compareNodeData(bisect, side.modelPath, request.tolerance, side.label, reference.label));
  if (bisect.firstDivergence) results.firstDivergence = qs(bisect.firstDivergence->node);
  return results;
}

Result<CompareResults> runProfile(const ProfileRequest& request, const RunOptions& runOptions, const ProgressSink& sink) {
  CompareConfig config{request.providers, request.modelPath, request.providers};
  KILN_ASSIGN_OR_RETURN(CompareSide side, kilnSide(config, request.shapes));
  side.options.progress.cancellation = sink.cancellation;
  sink.report("inputs", 0, 1);
  KILN_ASSIGN_OR_RETURN(ModelInfo declared, inspectModel(side.modelPath));
  KILN_ASSIGN_OR_RETURN(auto shapes, shapesByName(request.shapes));
  std::vector<std::string> given;
  for (const QString& entry : request.inputs) given.push_back(entry.toStdString());
  KILN_ASSIGN_OR_RETURN(auto inputs, app::prepareInputs(declared.inputs, given, shapes, "", request.seed));
  if (sink.cancelled()) return Status(StatusCode::CANCELLED, "cancelled");
  sink.report("session", 0, 1);
  // Device timestamps per dispatch, so a Vulkan partition's nodes get their own times (ignored by other EPs).
  KILN_RETURN_IF_ERROR(side.options.addConfigEntry(config::kVulkanProfile, "1"));
  KILN_ASSIGN_OR_RETURN(auto session, Session::create(side.modelPath, side.options));
  const int runs = std::max(1, request.runs);
  for (int run = 0; run < runs; ++run) {
    if (sink.cancelled()) return Status(StatusCode::CANCELLED, "cancelled");
    if (runs <= 100 || run % (runs / 100) == 0) sink.report("profile", run, runs);  // at most ~100 steps
    RunOptions options = runOptions;  // copies share the terminate flag cancel() sets
    options.setProfiling(run == runs - 1);
    auto outputs = session->run(inputs, options);
    if (!outputs.isOk()) return outputs.status();
  }
  sink.report("profile", runs, runs);
  CompareResults results;
  results.sideLabel = request.providers.isEmpty() ? QStringLiteral("default EPs") : request.providers;
  results.nodes = nodeMetrics(app::nodeDataFromProfile(session->lastRunProfile(), side.modelPath));
  return results;
}

}  // namespace

QStringList NodeMetrics::metricNames() const {
  std::set<QString> names;
  for (const auto& row : nodes) {
    for (auto it = row.metrics.begin(); it != row.metrics.end(); ++it) names.insert(it.key());
  }
  return QStringList(names.begin(), names.end());
}

bool CompareResults::passed() const {
  return std::all_of(outputs.begin(), outputs.end(), [](const OutputRow& row) { return row.passed; }) &&
         firstDivergence.isEmpty();
}

Result<CompareResults> loadCompareFile(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) {
    return Status(StatusCode::NO_SUCHFILE, "cannot open " + path.toStdString() + ": " + file.errorString().toStdString());
  }
  const QByteArray bytes = file.readAll();
  const nlohmann::json document = nlohmann::json::parse(bytes.constBegin(), bytes.constEnd(), nullptr, false);
  if (document.is_discarded() || !document.is_object()) {
    return Status(StatusCode::INVALID_ARGUMENT, path.toStdString() + " is not a JSON object");
  }
  CompareResults results;
  if (document.contains("format")) {
    auto data = app::nodeDataFromJson(document);
    if (!data.isOk()) return data.status().withContext(path.toStdString());
    results.nodes = nodeMetrics(*data);
    for (const auto& row : results.nodes.nodes) {
      if (row.firstDivergence) results.firstDivergence = row.node;
    }
    if (data->summary.is_object()) {
      results.sideLabel = qs(data->summary.value("side", std::string()));
      results.referenceLabel = qs(data->summary.value("reference", std::string()));
    }
    return results;
  }
  if (!document.contains("outputs") || !document["outputs"].is_array()) {
    return Status(StatusCode::INVALID_ARGUMENT, path.toStdString() + " is neither per-node data (\"format\": "
                                                "\"kiln-node-data\") nor a kiln compare --json report (\"outputs\")");
  }
  results.sideLabel = qs(document.value("side", std::string()));
  results.referenceLabel = qs(document.value("reference", std::string()));
  for (const auto& entry : document["outputs"]) {
    if (entry.is_object()) results.outputs << outputRow(entry);
  }
  if (document.contains("first_divergence") && document["first_divergence"].is_object()) {
    results.firstDivergence = qs(document["first_divergence"].value("node", std::string()));
  }
  return results;
}

CompareJob::CompareJob(QObject* parent) : QObject(parent) { qRegisterMetaType<kiln::bridge::CompareResults>(); }

CompareJob::~CompareJob() = default;  // the worker cancels a running comparison and waits for it

bool CompareJob::start(const CompareRequest& request) {
  runOptions_.reset();
  return startWork([request](const ProgressSink& sink) { return runComparison(request, sink); });
}

bool CompareJob::startProfile(const ProfileRequest& request) {
  if (worker_.isRunning()) return false;
  runOptions_ = std::make_shared<RunOptions>();
  return startWork([request, options = *runOptions_](const ProgressSink& sink) { return runProfile(request, options, sink); });
}

bool CompareJob::startWork(const std::function<Result<CompareResults>(const ProgressSink&)>& work) {
  return worker_.start(
      this, QStringLiteral("kiln-compare"), work,
      [this](const ProgressEvent& event) {
        emit progress(QString::fromStdString(event.stage), event.done, event.total);
      },
      [this](const CompareResults& results) { emit finished(results); },
      [this](const QString& code, const QString& message) { emit failed(code, message); },
      "the comparison did not run");
}

void CompareJob::cancel() {
  worker_.cancel();
  if (auto options = runOptions_) options->setTerminate();
}

}  // namespace kiln::bridge
