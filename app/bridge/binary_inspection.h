// Binary inspection for the studio: a context binary (<stem>_vulkan.bin) or a ctx model (<stem>_ctx.onnx, followed
// to its binaries, embedded or not) described on a worker thread, verdicts against a live device or a device
// profile, the Vulkan device list, and the byte access and hex formatting behind the inspector's hex view.
#pragma once

#include <QByteArray>
#include <QList>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QThread>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>

#include "kiln/context_binary.h"
#include "kiln/context_binary_parts.h"
#include "kiln/device.h"
#include "kiln/epcontext.h"

namespace kiln::bridge {

// Where a context binary's bytes are: a file and the range of it the binary occupies. A .bin file is the whole
// file; a binary embedded in a ctx model (embed mode 1) is the ep_cache_context attribute's bytes inside the .onnx,
// read in place so the inspector never copies a multi-MB payload to show 50 lines of it.
struct BinarySource {
  QString filePath;
  qint64 base = 0;    // file offset of the binary's byte 0
  qint64 length = 0;  // the binary's size
};

// One node that dispatches a pipeline (the binary's pipeline_users section): its partition, the node in the
// partition's graph, and the EPContext node that runs the partition ("" for a bare .bin).
struct PipelineUser {
  QString graph;
  int nodeIndex = -1;
  QString node;           // "" for an unnamed node
  QString epContextNode;
  // "conv1 (vulkan_0)", "#3 (vulkan_0)" for an unnamed node.
  QString displayName() const;
};

// One SPIR-V module (a compute pipeline's shader) of a binary: its size and who dispatches it.
struct SpirvPipeline {
  QString key;             // the shader variant key
  std::vector<uint32_t> words;
  QStringList graphs;      // compiled partitions whose kernels dispatch it
  QStringList nodes;       // EPContext nodes (ctx model) that run those partitions
  QList<PipelineUser> users;  // the nodes that dispatch it (none when the binary does not record them)
  qint64 bytes() const { return static_cast<qint64>(words.size()) * 4; }
};

// One binary the inspection found, with what the engine says about it.
struct InspectedBinary {
  QString key;  // the binary's path, or "embedded in '<node>'" as inspectEpContextModel names it
  bool embedded = false;
  BinarySource source;
  ContextBinaryInfo info;
  QString sourceProblem;  // why the bytes cannot be shown (the hex view says so); "" when `source` is usable
  QList<SpirvPipeline> pipelines;  // every SPIR-V module, in section order (empty for a damaged binary)
  // Set when the binary fails validation: `info` then holds only what diagnoseContextBinary could read, and the
  // diagnosis names the failed part (header or a section) and its byte range.
  std::optional<ContextBinaryDiagnosis> damage;
};

// The result of inspecting one file.
struct Inspection {
  QString path;
  bool ctxModel = false;
  std::shared_ptr<const EpContextModelInfo> model;  // set for a ctx model
  QList<InspectedBinary> binaries;                  // a .bin gives one; a ctx model one per distinct binary
  // The engine's error when the file is a context binary that fails validation (binaries[0].damage says where);
  // "" when it reads cleanly.
  QString problem;
};

// What the SPIR-V tab says when a binary does not record which nodes use each pipeline (app/common's note).
QString noPipelineUsersNote();

// The SPIR-V module as assembly text (SPIRV-Tools' disassembler, friendly names, indented), or INVALID_GRAPH with
// the disassembler's message for words that are not valid SPIR-V.
Result<QString> disassembleSpirv(const std::vector<uint32_t>& words);
// The failed part of a diagnosis as a phrase: "header" or "<kind> section".
QString failedPartName(const ContextBinaryDiagnosis& damage);
// Why a ctx model has no binary to show: its model-level problems and each EPContext node's problem, one line each.
QStringList unfollowedBinaryReasons(const EpContextModelInfo& model);

// One row of the inspector's Header tab.
struct HeaderField {
  QString field, value, meaning;
};

// The header fields of `info` with what each means (engine/README.md, "The context binary").
QList<HeaderField> headerFields(const ContextBinaryInfo& info);
// What a section kind ("device", "graphs", "spirv", "driver_cache", "weights") holds, for tooltips and captions.
QString sectionMeaning(const std::string& kind);
// "weights saved by deduplication" as bytes and the share of the referenced bytes: {saved, percent}.
std::pair<uint64_t, double> dedupSavings(const ContextBinaryInfo& info);

// Reads bytes [offset, offset + size) of a binary (offsets relative to the binary's byte 0), clipped to its end.
// Reads only what is asked: the hex view asks for its visible window.
Result<QByteArray> readBinaryBytes(const BinarySource& source, qint64 offset, qint64 size);

// One hex-dump line: "00000040  4b 49 4c 4e 56 4b 43 42  01 00 00 00 00 00 00 00  |KILNVKCB........|". `offset`
// is printed as the line's address (8 hex digits, more when needed); up to 16 bytes, short lines padded so the
// ASCII column stays aligned; bytes outside 0x20..0x7e print as '.'.
QString formatHexLine(qint64 offset, const QByteArray& bytes);
// True when the file at `path` starts with a Kiln context binary's magic ("KILNVKCB"), whatever its name: File >
// Open and drops send such a file to the binary inspector instead of the model loader.
bool isContextBinaryFile(const QString& path);
// Every 16-byte line of `bytes`, addresses starting at `offset`.
QStringList formatHexDump(qint64 offset, const QByteArray& bytes);

// Runs inspections, verdicts and the device enumeration on one worker thread and reports on the owner's thread.
// Each kind of request keeps only its newest: a slow earlier file or device never overwrites a newer answer.
class BinaryInspectionWorker : public QObject {
  Q_OBJECT

 public:
  explicit BinaryInspectionWorker(QObject* parent = nullptr);
  // Waits for the running request to finish; its result is dropped.
  ~BinaryInspectionWorker() override;

  // A .onnx path is read as a ctx model (inspectEpContextModel: a plain model is an error), anything else as a
  // context binary (inspectContextBinary).
  void inspect(const QString& path);
  // The verdict of `binary` against a live device (`deviceSelector`: index or name substring, "" for the device a
  // compile would pick) or, when `profilePath` is not empty, against that device profile. An embedded binary is
  // judged from a temporary copy of its bytes, removed afterwards.
  void judge(const InspectedBinary& binary, const QString& deviceSelector, const QString& profilePath = {});
  // listVulkanDevices().
  void listDevices();

  bool isInspecting() const { return inspecting_; }

 signals:
  void inspected(const kiln::bridge::Inspection& inspection);
  void inspectFailed(const QString& path, const QString& message);
  void verdictReady(const kiln::CompatibilityVerdict& verdict);
  void verdictFailed(const QString& message);
  void devicesListed(const QList<kiln::VulkanDeviceDescription>& devices);
  void devicesFailed(const QString& message);

 private:
  QThread thread_;
  QObject* workerContext_;  // lives in thread_; queued calls to it run there
  std::atomic<quint64> latestInspect_{0}, latestVerdict_{0}, latestDevices_{0};
  std::atomic<bool> closing_{false};
  bool inspecting_ = false;
};

}  // namespace kiln::bridge

Q_DECLARE_METATYPE(kiln::bridge::Inspection)
Q_DECLARE_METATYPE(kiln::CompatibilityVerdict)
Q_DECLARE_METATYPE(QList<kiln::VulkanDeviceDescription>)
