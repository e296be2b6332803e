// kiln-studio's parsing paths through its bridge (app/bridge), headless: every input is opened as a model by the
// GraphLoader (inspect, partition, EPContext inspection), as a ctx model and as a context binary by the
// BinaryInspectionWorker (then judged against the lavapipe profile and shown as header fields and a hex dump), and
// parsed as a `kiln bench --json` report. Each must answer with a result or a non-empty message within 60 s.
// Replayed in the ci build over deterministic mutations (mutate_main.cpp); it is also a valid libFuzzer target.
#include <QByteArray>
#include <QCoreApplication>
#include <QEventLoop>
#include <QTimer>

#include <cstdio>
#include <cstdlib>

#include "bench_report_io.h"
#include "binary_inspection.h"
#include "fuzz_support.h"
#include "graph_loader.h"

namespace {

using namespace kiln::bridge;

constexpr int kAnswerTimeoutMs = 60000;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_studio_bridge: %s\n", what);
  std::abort();
}

void requireMessage(const QString& message) {
  if (message.trimmed().isEmpty()) fail("a failure came with an empty message");
  if (kiln::fuzz::verbose()) std::fprintf(stderr, "  failed: %s\n", qPrintable(message));
}

void noteSuccess(const char* what) {
  if (kiln::fuzz::verbose()) std::fprintf(stderr, "  %s: OK\n", what);
}

// Runs the event loop until `finished` is set by a signal handler; a missing answer is a hang.
void waitFor(const bool& finished) {
  QEventLoop loop;
  QTimer timeout;
  timeout.setSingleShot(true);
  QObject::connect(&timeout, &QTimer::timeout, &loop, [] { fail("no answer within 60 s"); });
  timeout.start(kAnswerTimeoutMs);
  while (!finished) loop.processEvents(QEventLoop::WaitForMoreEvents);
}

void openAsGraph(GraphLoader& loader, const QString& path) {
  bool finished = false;
  QMetaObject::Connection ok = QObject::connect(&loader, &GraphLoader::loaded, [&](std::shared_ptr<const GraphDocument> document, double) {
    noteSuccess(document->partitionError().isEmpty() ? "graph" : "graph (partition error shown)");
    finished = true;
  });
  QMetaObject::Connection failed = QObject::connect(&loader, &GraphLoader::failed, [&](const QString&, const QString& message) {
    requireMessage(message);
    finished = true;
  });
  loader.load(path);
  waitFor(finished);
  QObject::disconnect(ok);
  QObject::disconnect(failed);
}

void openAsBinary(BinaryInspectionWorker& worker, const QString& path, const QString& profile) {
  bool finished = false;
  Inspection inspection;
  QMetaObject::Connection ok = QObject::connect(&worker, &BinaryInspectionWorker::inspected, [&](const Inspection& result) {
    inspection = result;
    noteSuccess("inspection");
    finished = true;
  });
  QMetaObject::Connection failed = QObject::connect(&worker, &BinaryInspectionWorker::inspectFailed,
                                                    [&](const QString&, const QString& message) {
    requireMessage(message);
    finished = true;
  });
  worker.inspect(path);
  waitFor(finished);
  QObject::disconnect(ok);
  QObject::disconnect(failed);
  for (const InspectedBinary& binary : inspection.binaries) {
    (void)headerFields(binary.info);
    (void)dedupSavings(binary.info);
    if (binary.sourceProblem.isEmpty()) {
      auto bytes = readBinaryBytes(binary.source, 0, 4096);
      if (bytes.isOk()) (void)formatHexDump(0, bytes.value());
    }
    bool judged = false;
    QMetaObject::Connection verdict = QObject::connect(&worker, &BinaryInspectionWorker::verdictReady, [&](const kiln::CompatibilityVerdict&) {
      noteSuccess("verdict");
      judged = true;
    });
    QMetaObject::Connection refused = QObject::connect(&worker, &BinaryInspectionWorker::verdictFailed, [&](const QString& message) {
      requireMessage(message);
      judged = true;
    });
    worker.judge(binary, QString(), profile);
    waitFor(judged);
    QObject::disconnect(verdict);
    QObject::disconnect(refused);
  }
}

void parseAsBenchReport(const QByteArray& bytes) {
  QString error;
  std::optional<BenchReport> report = parseBenchReport(bytes, &error);
  if (!report) {
    requireMessage(error);
    return;
  }
  noteSuccess("bench report");
  (void)report->caption();
  for (const BenchRow& row : report->rows) (void)row.label();
  (void)benchReportCsv(*report);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static int argc = 1;
  static char name[] = "fuzz_studio_bridge";
  static char* argv[] = {name, nullptr};
  static QCoreApplication app(argc, argv);
  static const QString profile =
      QString::fromStdString((kiln::fuzz::sourceDir() / "resources/profiles/lavapipe.json").string());
  static GraphLoader* loader = (kiln::fuzz::quietLogging(), new GraphLoader);
  static BinaryInspectionWorker* worker = new BinaryInspectionWorker;

  const QString model = QString::fromStdString(kiln::fuzz::writeScratchFile("studio_ctx.onnx", data, size));
  const QString binary = QString::fromStdString(kiln::fuzz::writeScratchFile("studio_vulkan.bin", data, size));
  openAsGraph(*loader, model);
  openAsBinary(*worker, model, profile);
  openAsBinary(*worker, binary, profile);
  parseAsBenchReport(QByteArray(reinterpret_cast<const char*>(data), static_cast<qsizetype>(size)));
  return 0;
}
