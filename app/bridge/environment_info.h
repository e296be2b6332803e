// What the About box and bug reports need to know about this installation: the versions of Kiln and Qt, and the
// Vulkan devices with their drivers. Enumerating Vulkan devices loads every installed driver (tens of milliseconds,
// more on a cold disk), so VulkanProbe does it on a worker thread.
#pragma once

#include <QObject>
#include <QString>
#include <QStringList>
#include <QThread>

namespace kiln::bridge {

QString kilnVersion();
QString qtVersion();  // the Qt the studio runs with (and was built against, when they differ)

// One line per Vulkan device: "llvmpipe (LLVM 15.0.6, 256 bits): Mesa 22.3.6 (llvmpipe), Vulkan 1.3.230, cpu".
// On failure, a single line with the engine's message. Blocking: call it off the UI thread.
QStringList describeVulkanDevices();

// The bundled sample model (resources/models/tiny_cnn.onnx): in $KILN_DATA_DIR/models when KILN_DATA_DIR is set (the
// tests set it to resources/), else beside an installed kiln-studio (<prefix>/share/kiln/models). Empty when absent.
QString sampleModelPath();

class VulkanProbe : public QObject {
  Q_OBJECT

 public:
  explicit VulkanProbe(QObject* parent = nullptr);
  ~VulkanProbe() override;  // waits for a running probe

  // Starts the probe unless it ran or is running; `finished` follows on this object's thread.
  void start();
  bool hasResult() const { return done_; }
  const QStringList& devices() const { return devices_; }

 signals:
  void finished(const QStringList& devices);

 private:
  QThread* thread_ = nullptr;
  QStringList devices_;
  bool done_ = false;
};

}  // namespace kiln::bridge
