#include "environment_info.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QPointer>

#include "build_tree.h"
#include "kiln/device.h"
#include "kiln/version.h"

namespace kiln::bridge {

QString kilnVersion() { return QString::fromLatin1(engineVersion()); }

QString qtVersion() {
  const QString running = QString::fromLatin1(qVersion());
  const QString built = QStringLiteral(QT_VERSION_STR);
  return running == built ? running : QStringLiteral("%1 (built with %2)").arg(running, built);
}

QStringList describeVulkanDevices() {
  Result<std::vector<VulkanDeviceDescription>> devices = listVulkanDevices();
  if (!devices.isOk()) return {QString::fromStdString(devices.status().toString())};
  if (devices->empty()) return {QCoreApplication::translate("kiln", "no Vulkan device with a compute queue")};
  QStringList lines;
  for (const VulkanDeviceDescription& device : *devices) {
    QString driver = QString::fromStdString(device.driverName);
    if (!device.driverInfo.empty()) driver += QLatin1Char(' ') + QString::fromStdString(device.driverInfo);
    lines.append(QStringLiteral("%1: %2 %3, Vulkan %4, %5")
                     .arg(QString::number(device.index), QString::fromStdString(device.name), driver,
                          QString::fromStdString(device.apiVersion), QString::fromLatin1(vulkanDeviceTypeName(device.type))));
  }
  return lines;
}

QString sampleModelPath() {
  // $KILN_DATA_DIR, the build tree's resources/ (kiln-build-tree.conf) or <prefix>/share/kiln (app/common/build_tree.h).
  const QString dataDir =
      QString::fromStdString(app::dataDirectory(QCoreApplication::applicationFilePath().toStdString()));
  const QString path = QDir(dataDir).filePath(QStringLiteral("models/tiny_cnn.onnx"));
  return QFileInfo::exists(path) ? QDir::cleanPath(path) : QString();
}

VulkanProbe::VulkanProbe(QObject* parent) : QObject(parent) {}

VulkanProbe::~VulkanProbe() {
  if (thread_) thread_->wait();
}

void VulkanProbe::start() {
  if (thread_) return;
  thread_ = QThread::create([this] {
    QStringList lines = describeVulkanDevices();
    QMetaObject::invokeMethod(this, [this, lines = std::move(lines)] {
      devices_ = lines;
      done_ = true;
      emit finished(devices_);
    });
  });
  thread_->setObjectName(QStringLiteral("kiln-vulkan-probe"));
  thread_->setParent(this);
  thread_->start();
}

}  // namespace kiln::bridge
