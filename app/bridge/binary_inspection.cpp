#include "binary_inspection.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryFile>

#include <exception>

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

// --- The protobuf wire format, just enough to find one attribute's bytes without parsing the whole model. ---
// Field numbers from onnx.proto: ModelProto.graph = 7; GraphProto.node = 1; NodeProto.name = 3, op_type = 4,
// attribute = 5; AttributeProto.name = 1, s = 4, g = 6, graphs = 11.

struct Span {
  const uchar* begin = nullptr;
  const uchar* end = nullptr;
  QByteArray text() const { return QByteArray(reinterpret_cast<const char*>(begin), end - begin); }
};

bool readVarint(const uchar*& p, const uchar* end, uint64_t& value) {
  value = 0;
  for (int shift = 0; shift < 64 && p < end; shift += 7) {
    const uchar byte = *p++;
    value |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (!(byte & 0x80)) return true;
  }
  return false;
}

// Calls visit(field, span) for every length-delimited field of the message in `message`; skips the others.
// False when the message is malformed.
template <class Visit>
bool forEachLengthField(Span message, Visit&& visit) {
  const uchar* p = message.begin;
  while (p < message.end) {
    uint64_t tag = 0;
    if (!readVarint(p, message.end, tag)) return false;
    const uint64_t field = tag >> 3;
    switch (tag & 7) {
      case 0: {
        uint64_t ignored = 0;
        if (!readVarint(p, message.end, ignored)) return false;
        break;
      }
      case 1:
        if (message.end - p < 8) return false;
        p += 8;
        break;
      case 5:
        if (message.end - p < 4) return false;
        p += 4;
        break;
      case 2: {
        uint64_t length = 0;
        if (!readVarint(p, message.end, length) || length > static_cast<uint64_t>(message.end - p)) return false;
        const Span value{p, p + length};
        p += length;
        if (!visit(field, value)) return false;
        break;
      }
      default:
        return false;  // groups (3, 4) are not used by onnx.proto
    }
  }
  return true;
}

struct Search {
  QByteArray nodeName;
  std::optional<Span> found;
};

bool searchGraph(Span graph, Search& search, int depth);

bool searchNode(Span node, Search& search, int depth) {
  QByteArray name, opType;
  std::optional<Span> context;
  std::vector<Span> bodies;
  const bool ok = forEachLengthField(node, [&](uint64_t field, Span value) {
    if (field == 3) name = value.text();
    if (field == 4) opType = value.text();
    if (field != 5) return true;
    QByteArray attrName;
    std::optional<Span> s;
    const bool attrOk = forEachLengthField(value, [&](uint64_t attrField, Span attrValue) {
      if (attrField == 1) attrName = attrValue.text();
      if (attrField == 4) s = attrValue;
      if (attrField == 6 || attrField == 11) bodies.push_back(attrValue);
      return true;
    });
    if (attrName == "ep_cache_context" && s) context = s;
    return attrOk;
  });
  if (!ok) return false;
  if (opType == "EPContext" && name == search.nodeName && context) {
    search.found = context;
    return true;
  }
  for (const Span& body : bodies) {
    if (!searchGraph(body, search, depth + 1)) return false;
    if (search.found) return true;
  }
  return true;
}

bool searchGraph(Span graph, Search& search, int depth) {
  if (depth > 64) return false;  // deeper nesting than any real model: treat as malformed rather than recurse on
  return forEachLengthField(graph, [&](uint64_t field, Span value) {
    if (search.found || field != 1) return true;
    return searchNode(value, search, depth);
  });
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
  return QStringLiteral("A section kind this studio does not know");
}

std::pair<uint64_t, double> dedupSavings(const ContextBinaryInfo& info) {
  const uint64_t saved = info.weightBytesReferenced > info.weightBytes ? info.weightBytesReferenced - info.weightBytes : 0;
  const double percent =
      info.weightBytesReferenced ? 100.0 * static_cast<double>(saved) / static_cast<double>(info.weightBytesReferenced) : 0.0;
  return {saved, percent};
}

Result<BinarySource> locateEmbeddedContext(const QString& onnxPath, const QString& nodeName) {
  QFile file(onnxPath);
  if (!file.open(QIODevice::ReadOnly)) {
    return Status(StatusCode::NO_SUCHFILE, "cannot open " + onnxPath.toStdString() + ": " + file.errorString().toStdString());
  }
  const qint64 size = file.size();
  // Mapped, not read: an embedded binary can be hundreds of MB and only its position is wanted here.
  uchar* data = size > 0 ? file.map(0, size) : nullptr;
  if (!data) return Status(StatusCode::INVALID_PROTOBUF, onnxPath.toStdString() + " is empty or cannot be mapped");
  Search search{nodeName.toUtf8(), std::nullopt};
  const Span model{data, data + size};
  const bool ok = forEachLengthField(model, [&](uint64_t field, Span value) {
    if (field != 7 || search.found) return true;
    return searchGraph(value, search, 0);
  });
  std::optional<BinarySource> source;
  if (search.found) source = BinarySource{onnxPath, search.found->begin - data, search.found->end - search.found->begin};
  file.unmap(data);
  if (source) return *source;
  if (!ok) return Status(StatusCode::INVALID_PROTOBUF, onnxPath.toStdString() + " is not a readable ONNX model");
  return Status(StatusCode::INVALID_GRAPH, "no EPContext node '" + nodeName.toStdString() + "' with an ep_cache_context in " +
                                               onnxPath.toStdString());
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

Result<Inspection> inspectFile(const QString& path) {
  Inspection inspection;
  inspection.path = path;
  if (!path.endsWith(QStringLiteral(".onnx"), Qt::CaseInsensitive)) {
    auto info = inspectContextBinary(path.toStdString());
    if (!info.isOk()) return info.status();
    InspectedBinary binary;
    binary.key = path;
    binary.source = {path, 0, static_cast<qint64>(info->fileSize)};
    binary.info = std::move(info).value();
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
    binary.embedded = key.rfind("embedded", 0) == 0;
    if (!binary.embedded) {
      binary.source = {binary.key, 0, static_cast<qint64>(info.fileSize)};
    } else {
      // The node that carries the payload is the one the engine followed to this key.
      QString nodeName;
      for (const auto& node : model->nodes) {
        if (node.binary == key && node.embedMode == 1 && node.mainContext != 0) nodeName = qs(node.name);
      }
      auto located = locateEmbeddedContext(path, nodeName);
      if (located.isOk() && located->length == static_cast<qint64>(info.fileSize)) {
        binary.source = *located;
      } else {
        binary.sourceProblem = located.isOk() ? QStringLiteral("the embedded payload's size differs from the binary's")
                                              : message(located.status());
      }
    }
    inspection.binaries << binary;
  }
  inspection.model = std::make_shared<const EpContextModelInfo>(std::move(model).value());
  return inspection;
}

Result<CompatibilityVerdict> judgeBinary(const InspectedBinary& binary, const QString& device, const QString& profile) {
  auto check = [&](const std::string& file) {
    return profile.isEmpty() ? checkContextBinary(file, device.toStdString())
                             : checkContextBinaryAgainstProfile(file, profile.toStdString());
  };
  if (!binary.embedded) return check(binary.key.toStdString());
  if (!binary.sourceProblem.isEmpty()) return Status(StatusCode::INVALID_GRAPH, binary.sourceProblem.toStdString());
  // The engine judges files; an embedded payload is judged from a private temporary copy, deleted on return.
  auto bytes = readBinaryBytes(binary.source, 0, binary.source.length);
  if (!bytes.isOk()) return bytes.status();
  QTemporaryFile copy(QDir::tempPath() + QStringLiteral("/kiln-studio-XXXXXX_vulkan.bin"));
  if (!copy.open() || copy.write(*bytes) != bytes->size() || !copy.flush()) {
    return Status(StatusCode::FAIL, "cannot write a temporary copy of the embedded binary: " + copy.errorString().toStdString());
  }
  return check(copy.fileName().toStdString());
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

}  // namespace kiln::bridge
