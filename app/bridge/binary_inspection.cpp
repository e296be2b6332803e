#include "binary_inspection.h"

#include <QFile>
#include <QFileInfo>

#include <spirv-tools/libspirv.hpp>

#include <algorithm>
#include <exception>
#include <span>

#include "engine_json.h"

namespace kiln::bridge {

namespace {

QString hex(uint32_t value, int digits = 4) {
  return QStringLiteral("0x%1").arg(value, digits, 16, QLatin1Char('0'));
}

QString qs(const std::string& text) { return QString::fromStdString(text); }

QString joinedOrDash(const std::vector<std::string>& items) {
  QStringList list;
  for (const auto& item : items) list << qs(item);
  return list.isEmpty() ? QStringLiteral("-") : list.join(QStringLiteral(", "));
}

}  // namespace

QList<HeaderField> headerFields(const ContextBinaryInfo& info) {
  const bool profile = info.target == "profile";
  return {
      {QStringLiteral("Magic"), QStringLiteral("KILNVKCB"),
       QStringLiteral("Identifies a Kiln Vulkan context binary (checked first; anything else is refused)")},
      {QStringLiteral("Format version"), qs(info.formatVersion),
       QStringLiteral("major.minor: an engine reads only its own major; minors add fields older readers skip")},
      {QStringLiteral("File size"), QStringLiteral("%1 bytes").arg(info.fileSize),
       QStringLiteral("Recorded in the header; a file of another length is truncated or padded (INVALID_GRAPH)")},
      {QStringLiteral("Written by engine"), qs(info.producerEngineVersion),
       QStringLiteral("The Kiln version that compiled it")},
      {QStringLiteral("Readable by engines"), qs(info.readableEngineVersions),
       QStringLiteral("Engine versions that may load it; outside this range the verdict is unsupported")},
      {QStringLiteral("Target"), profile ? QStringLiteral("device profile") : QStringLiteral("live device"),
       profile ? QStringLiteral("Cross-compiled for a device profile: no driver cache, loads as compatible at best")
               : QStringLiteral("Compiled on a live device: its driver pipeline cache can make the verdict optimal")},
      {QStringLiteral("Device"), qs(info.deviceName),
       QStringLiteral("The producer device's name (from the stored device profile; the header holds its hash)")},
      {QStringLiteral("Vendor ID"), hex(info.vendorId), QStringLiteral("PCI vendor of the producer device")},
      {QStringLiteral("Device ID"), hex(info.deviceId), QStringLiteral("PCI device of the producer device")},
      {QStringLiteral("Driver ID"), QString::number(info.driverId),
       QStringLiteral("VkDriverId of the producer's driver (Mesa llvmpipe, NVIDIA proprietary, ...)")},
      {QStringLiteral("Driver version"), hex(info.driverVersion, 1),
       QStringLiteral("Driver version as the driver encodes it; a difference makes the verdict compatible")},
      {QStringLiteral("Driver name"), info.driverName.empty() ? QStringLiteral("-") : qs(info.driverName),
       QStringLiteral("VkPhysicalDeviceDriverProperties::driverName")},
      {QStringLiteral("Driver info"), info.driverInfo.empty() ? QStringLiteral("-") : qs(info.driverInfo),
       QStringLiteral("driverInfo (header holds its xxHash3): tells driver builds apart, e.g. Mesa and LLVM versions")},
      {QStringLiteral("Vulkan API version"), qs(info.apiVersion), QStringLiteral("The producer device's API version")},
      {QStringLiteral("Pipeline cache UUID"), qs(info.pipelineCacheUuid),
       QStringLiteral("The driver's pipelineCacheUUID: the stored driver cache is used only on an equal UUID")},
      {QStringLiteral("Required features"), joinedOrDash(info.requiredFeatures),
       QStringLiteral("Read from the SPIR-V's OpCapability instructions; a device lacking one is unsupported")},
      {QStringLiteral("Subgroup size"), QString::number(info.subgroupSize),
       QStringLiteral("The subgroup size kernels were sized for; must match where subgroup operations are used")},
      {QStringLiteral("Workgroup invocations"), QString::number(info.requiredWorkgroupInvocations),
       QStringLiteral("The largest workgroup: needs maxComputeWorkGroupInvocations at least this")},
      {QStringLiteral("Push constant bytes"), QString::number(info.requiredPushConstantBytes),
       QStringLiteral("The most push-constant bytes a kernel uses: needs maxPushConstantsSize at least this")},
      {QStringLiteral("Sections"), QString::number(info.sections.size()),
       QStringLiteral("Entries of the section table: kind, 64-byte aligned offset, size, xxHash3, item count")},
      {QStringLiteral("Driver cache"),
       info.driverCacheBytes ? QStringLiteral("%1 bytes").arg(info.driverCacheBytes) : QStringLiteral("none"),
       QStringLiteral("The producer's VkPipelineCache data (lavapipe's is only its 32-byte header)")},
  };
}

QString sectionMeaning(const std::string& kind) {
  if (kind == "device") {
    return QStringLiteral("The target's device profile (JSON): kernels are re-created for it on load");
  }
  if (kind == "graphs") {
    return QStringLiteral("Per compiled partition: name, EP, inputs, outputs, nodes after fusions, value types, "
                          "initializers as weight references, the SPIR-V modules it uses");
  }
  if (kind == "spirv") return QStringLiteral("SPIR-V modules by shader-variant key, each stored once for all partitions");
  if (kind == "driver_cache") {
    return QStringLiteral("The producer's VkPipelineCache data (live-device targets only)");
  }
  if (kind == "weights") {
    return QStringLiteral("Weight blobs deduplicated by content across partitions and models (xxHash3, then bytes)");
  }
  if (kind == "pipeline_users") {
    return QStringLiteral("Per partition, the nodes whose kernels dispatch each SPIR-V module (format 1.2)");
  }
  return QStringLiteral("A section kind this studio does not know");
}

QString PipelineUser::displayName() const {
  return QStringLiteral("%1 (%2)").arg(node.isEmpty() ? QStringLiteral("#%1").arg(nodeIndex) : node, graph);
}

QString noPipelineUsersNote() {
  QString note = QString::fromLatin1(app::kNoPipelineUsersNote);
  note[0] = note[0].toUpper();
  return note + QLatin1Char('.');
}

std::pair<uint64_t, double> dedupSavings(const ContextBinaryInfo& info) {
  const uint64_t saved = info.weightBytesReferenced > info.weightBytes ? info.weightBytesReferenced - info.weightBytes : 0;
  const double percent =
      info.weightBytesReferenced ? 100.0 * static_cast<double>(saved) / static_cast<double>(info.weightBytesReferenced) : 0.0;
  return {saved, percent};
}

Result<QString> disassembleSpirv(const std::vector<uint32_t>& words) {
  spvtools::SpirvTools tools(SPV_ENV_VULKAN_1_1);
  std::string messages;
  tools.SetMessageConsumer([&](spv_message_level_t, const char*, const spv_position_t& position, const char* text) {
    messages += "word " + std::to_string(position.index) + ": " + text + "\n";
  });
  std::string text;
  if (!tools.Disassemble(words, &text, SPV_BINARY_TO_TEXT_OPTION_FRIENDLY_NAMES | SPV_BINARY_TO_TEXT_OPTION_INDENT)) {
    return Status(StatusCode::INVALID_GRAPH, "not valid SPIR-V: " + (messages.empty() ? std::string("disassembly failed") : messages));
  }
  return qs(text);
}

QString failedPartName(const ContextBinaryDiagnosis& damage) {
  return damage.failedPart == "header" ? QStringLiteral("header") : qs(damage.failedPart) + QStringLiteral(" section");
}

QStringList unfollowedBinaryReasons(const EpContextModelInfo& model) {
  QStringList reasons;
  for (const auto& problem : model.problems) reasons << qs(problem);
  for (const auto& node : model.nodes) {
    if (!node.problem.empty()) reasons << QStringLiteral("%1: %2").arg(qs(node.name), qs(node.problem));
  }
  return reasons;
}

Result<QByteArray> readBinaryBytes(const BinarySource& source, qint64 offset, qint64 size) {
  if (offset < 0 || size < 0) return Status(StatusCode::INVALID_ARGUMENT, "negative offset or size");
  QFile file(source.filePath);
  if (!file.open(QIODevice::ReadOnly)) {
    return Status(StatusCode::NO_SUCHFILE,
                  "cannot open " + source.filePath.toStdString() + ": " + file.errorString().toStdString());
  }
  const qint64 available = std::max<qint64>(0, source.length - offset);
  const qint64 wanted = std::min(size, available);
  if (wanted == 0) return QByteArray();
  if (!file.seek(source.base + offset)) {
    return Status(StatusCode::FAIL, "cannot seek in " + source.filePath.toStdString());
  }
  QByteArray bytes = file.read(wanted);
  if (bytes.size() != wanted) {
    return Status(StatusCode::FAIL, source.filePath.toStdString() + " is shorter than its section table says (changed on disk?)");
  }
  return bytes;
}

QString formatHexLine(qint64 offset, const QByteArray& bytes) {
  static const char kDigits[] = "0123456789abcdef";
  QString line = QStringLiteral("%1  ").arg(offset, 8, 16, QLatin1Char('0'));
  QString ascii;
  for (int i = 0; i < 16; ++i) {
    if (i < bytes.size()) {
      const auto byte = static_cast<uchar>(bytes[i]);
      line += QLatin1Char(kDigits[byte >> 4]);
      line += QLatin1Char(kDigits[byte & 15]);
      ascii += byte >= 0x20 && byte < 0x7f ? QLatin1Char(static_cast<char>(byte)) : QLatin1Char('.');
    } else {
      line += QStringLiteral("  ");
    }
    line += i == 7 ? QStringLiteral("  ") : QStringLiteral(" ");
  }
  return line + QStringLiteral(" |") + ascii + QLatin1Char('|');
}

QStringList formatHexDump(qint64 offset, const QByteArray& bytes) {
  QStringList lines;
  for (qsizetype at = 0; at < bytes.size(); at += 16) lines << formatHexLine(offset + at, bytes.mid(at, 16));
  return lines;
}

// --- The worker ---

namespace {

template <class T, class F>
Result<T> guarded(F&& call) {
  try {
    return call();
  } catch (const std::exception& e) {
    // The engine API does not throw, but std::bad_alloc on a huge file must not terminate the app.
    return Status(StatusCode::RUNTIME_EXCEPTION, e.what());
  }
}

QString message(const Status& status) { return QString::fromStdString(status.toString()); }

std::span<const std::byte> asBytes(const QByteArray& bytes) {
  return {reinterpret_cast<const std::byte*>(bytes.constData()), static_cast<size_t>(bytes.size())};
}

// The binary's SPIR-V modules with the graphs (and, in a ctx model, the EPContext nodes) that dispatch them. A
// file binary is mapped by the engine; an embedded one is read from its place in the .onnx.
Status addPipelines(InspectedBinary& binary, const EpContextModelInfo* model) {
  Result<std::vector<ContextBinarySpirvModule>> modules = Status(StatusCode::FAIL, "not read");
  if (binary.embedded) {
    auto bytes = readBinaryBytes(binary.source, 0, binary.source.length);
    if (!bytes.isOk()) return bytes.status();
    modules = readContextBinarySpirv(asBytes(*bytes), binary.key.toStdString());
  } else {
    modules = readContextBinarySpirv(binary.source.filePath.toStdString());
  }
  if (!modules.isOk()) return modules.status();
  for (auto& module : modules.value()) {
    SpirvPipeline pipeline;
    pipeline.key = qs(module.key);
    pipeline.words = std::move(module.words);
    // The EPContext node that runs each partition of this binary (ctx models only).
    auto epContextNodeOf = [&](const std::string& graph) {
      if (model) {
        for (const auto& node : model->nodes) {
          if (node.binary == binary.key.toStdString() && node.partitionName == graph) return qs(node.name);
        }
      }
      return QString();
    };
    for (const auto& graph : module.graphs) {
      pipeline.graphs << qs(graph);
      if (const QString node = epContextNodeOf(graph); !node.isEmpty()) pipeline.nodes << node;
    }
    for (const auto& ref : module.nodes) {
      pipeline.users << PipelineUser{qs(ref.graph), static_cast<int>(ref.nodeIndex), qs(ref.node), epContextNodeOf(ref.graph)};
    }
    binary.pipelines << pipeline;
  }
  return Status::ok();
}

Result<Inspection> inspectFile(const QString& path) {
  Inspection inspection;
  inspection.path = path;
  if (!path.endsWith(QStringLiteral(".onnx"), Qt::CaseInsensitive)) {
    auto info = inspectContextBinary(path.toStdString());
    InspectedBinary binary;
    binary.key = path;
    if (!info.isOk()) {
      // A Kiln binary that fails validation still shows what reads: the engine says which part failed and where.
      const qint64 size = QFileInfo(path).size();
      if (info.status().code() != StatusCode::INVALID_GRAPH || size <= 0) return info.status();
      auto bytes = readBinaryBytes({path, 0, size}, 0, size);
      if (!bytes.isOk()) return info.status();
      ContextBinaryDiagnosis diagnosis = diagnoseContextBinary(asBytes(*bytes), path.toStdString());
      if (!bytes->startsWith("KILNVKCB") || diagnosis.problem.empty()) return info.status();  // not a Kiln binary
      binary.source = {path, 0, size};
      binary.info = diagnosis.partial;
      binary.damage = std::move(diagnosis);
      inspection.problem = message(info.status());
      inspection.binaries << binary;
      return inspection;
    }
    binary.source = {path, 0, static_cast<qint64>(info->fileSize)};
    binary.info = std::move(info).value();
    KILN_RETURN_IF_ERROR(addPipelines(binary, nullptr));
    inspection.binaries << binary;
    return inspection;
  }
  auto model = inspectEpContextModel(path.toStdString());
  if (!model.isOk()) return model.status();
  if (model->nodes.empty()) {
    return Status(StatusCode::INVALID_GRAPH, path.toStdString() + " has no EPContext node: a plain model, not a "
                                                                  "compiled one (compile it first)");
  }
  inspection.ctxModel = true;
  for (const auto& [key, info] : model->binaries) {
    InspectedBinary binary;
    binary.key = qs(key);
    binary.info = info;
    const std::string& binaryKey = key;  // clang 14 (the fuzz build) cannot capture a structured binding
    binary.embedded = std::any_of(model->nodes.begin(), model->nodes.end(), [&](const EpContextNodeInfo& node) {
      return node.binary == binaryKey && node.embedded;
    });
    if (!binary.embedded) {
      binary.source = {binary.key, 0, static_cast<qint64>(info.fileSize)};
    } else {
      // The node that carries the payload is the one the engine followed to this key; the engine says where its
      // bytes lie in the .onnx file.
      const EpContextNodeInfo* carrier = nullptr;
      for (const auto& node : model->nodes) {
        if (node.binary == key && node.embedded) carrier = &node;
      }
      if (carrier && carrier->payloadSize == info.fileSize) {
        binary.source = {path, static_cast<qint64>(carrier->payloadOffset), static_cast<qint64>(carrier->payloadSize)};
      } else {
        binary.sourceProblem = carrier ? QStringLiteral("the embedded payload's size differs from the binary's")
                                       : QStringLiteral("no EPContext node embeds this binary");
      }
    }
    if (binary.sourceProblem.isEmpty()) KILN_RETURN_IF_ERROR(addPipelines(binary, &model.value()));
    inspection.binaries << binary;
  }
  inspection.model = std::make_shared<const EpContextModelInfo>(std::move(model).value());
  return inspection;
}

Result<CompatibilityVerdict> judgeBinary(const InspectedBinary& binary, const QString& device, const QString& profile) {
  if (!binary.embedded) {
    return profile.isEmpty() ? checkContextBinary(binary.key.toStdString(), device.toStdString())
                             : checkContextBinaryAgainstProfile(binary.key.toStdString(), profile.toStdString());
  }
  if (!binary.sourceProblem.isEmpty()) return Status(StatusCode::INVALID_GRAPH, binary.sourceProblem.toStdString());
  // An embedded payload is judged from its bytes, read in place from the .onnx file.
  auto bytes = readBinaryBytes(binary.source, 0, binary.source.length);
  if (!bytes.isOk()) return bytes.status();
  const std::span<const std::byte> payload(reinterpret_cast<const std::byte*>(bytes->constData()),
                                           static_cast<size_t>(bytes->size()));
  const std::string origin = binary.key.toStdString();
  return profile.isEmpty() ? checkContextBinary(payload, origin, device.toStdString())
                           : checkContextBinaryAgainstProfile(payload, origin, profile.toStdString());
}

}  // namespace

BinaryInspectionWorker::BinaryInspectionWorker(QObject* parent) : QObject(parent), workerContext_(new QObject) {
  qRegisterMetaType<Inspection>();
  qRegisterMetaType<CompatibilityVerdict>();
  qRegisterMetaType<QList<VulkanDeviceDescription>>();
  thread_.setObjectName(QStringLiteral("kiln-binary-inspection"));
  workerContext_->moveToThread(&thread_);
  connect(&thread_, &QThread::finished, workerContext_, &QObject::deleteLater);
  thread_.start();
}

BinaryInspectionWorker::~BinaryInspectionWorker() {
  // Results posted back to `this` after this point are discarded by Qt together with the object; queued requests
  // not yet started are skipped.
  closing_ = true;
  thread_.quit();
  thread_.wait();
}

void BinaryInspectionWorker::inspect(const QString& path) {
  const quint64 request = ++latestInspect_;
  inspecting_ = true;
  QMetaObject::invokeMethod(workerContext_, [this, request, path] {
    if (closing_ || request != latestInspect_) return;  // superseded while queued: not worth reading
    Result<Inspection> result = guarded<Inspection>([&] { return inspectFile(path); });
    QMetaObject::invokeMethod(
        this,
        [this, request, path, result = std::move(result)] {
          if (request != latestInspect_) return;
          inspecting_ = false;
          if (result.isOk()) {
            emit inspected(result.value());
          } else {
            emit inspectFailed(path, message(result.status()));
          }
        },
        Qt::QueuedConnection);
  });
}

void BinaryInspectionWorker::judge(const InspectedBinary& binary, const QString& deviceSelector,
                                   const QString& profilePath) {
  const quint64 request = ++latestVerdict_;
  QMetaObject::invokeMethod(workerContext_, [this, request, binary, deviceSelector, profilePath] {
    if (closing_ || request != latestVerdict_) return;
    Result<CompatibilityVerdict> result =
        guarded<CompatibilityVerdict>([&] { return judgeBinary(binary, deviceSelector, profilePath); });
    QMetaObject::invokeMethod(
        this,
        [this, request, result = std::move(result)] {
          if (request != latestVerdict_) return;
          if (result.isOk()) {
            emit verdictReady(result.value());
          } else {
            emit verdictFailed(message(result.status()));
          }
        },
        Qt::QueuedConnection);
  });
}

void BinaryInspectionWorker::listDevices() {
  const quint64 request = ++latestDevices_;
  QMetaObject::invokeMethod(workerContext_, [this, request] {
    if (closing_ || request != latestDevices_) return;
    auto result = guarded<std::vector<VulkanDeviceDescription>>([] { return listVulkanDevices(); });
    QMetaObject::invokeMethod(
        this,
        [this, request, result = std::move(result)] {
          if (request != latestDevices_) return;
          if (result.isOk()) {
            emit devicesListed(QList<VulkanDeviceDescription>(result->begin(), result->end()));
          } else {
            emit devicesFailed(message(result.status()));
          }
        },
        Qt::QueuedConnection);
  });
}

bool isContextBinaryFile(const QString& path) {
  QFile file(path);
  return file.open(QIODevice::ReadOnly) && file.read(8) == QByteArrayLiteral("KILNVKCB");
}

}  // namespace kiln::bridge
