#include "value_format.h"

#include <QStringList>

namespace kiln::bridge {

QString elementTypeName(DataType type) {
  switch (type) {
    case DataType::FLOAT: return QStringLiteral("float32");
    case DataType::DOUBLE: return QStringLiteral("float64");
    case DataType::FLOAT16: return QStringLiteral("float16");
    case DataType::BFLOAT16: return QStringLiteral("bfloat16");
    case DataType::COMPLEX64: return QStringLiteral("complex64");
    case DataType::COMPLEX128: return QStringLiteral("complex128");
    case DataType::UNDEFINED: return QStringLiteral("?");
    default: return QString::fromLatin1(dataTypeName(type));  // int8..uint64, bool, string match NumPy already
  }
}

QString formatShape(const ValueMetadata& value) {
  if (!value.hasShape) return QStringLiteral("[...]");
  QStringList dims;
  dims.reserve(static_cast<qsizetype>(value.shape.size()));
  for (const Dimension& dim : value.shape) {
    if (dim.isFixed()) {
      dims << QString::number(dim.value);
    } else if (!dim.param.empty()) {
      dims << QString::fromStdString(dim.param);
    } else {
      dims << QStringLiteral("?");
    }
  }
  return QLatin1Char('[') + dims.join(QLatin1Char(',')) + QLatin1Char(']');
}

QString formatValueType(const ValueMetadata& value) { return elementTypeName(value.dtype) + formatShape(value); }

QString formatByteSize(int64_t bytes) {
  if (bytes < 1024) return QStringLiteral("%1 B").arg(bytes);
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  double size = static_cast<double>(bytes);
  int unit = -1;
  while (size >= 1024.0 && unit < 3) {
    size /= 1024.0;
    ++unit;
  }
  return QStringLiteral("%1 %2").arg(size, 0, 'f', size < 10.0 ? 2 : 1).arg(QLatin1String(kUnits[unit]));
}

QString formatDomain(const std::string& domain) {
  return domain.empty() ? QStringLiteral("ai.onnx") : QString::fromStdString(domain);
}

QString formatOpsets(const std::map<std::string, int64_t>& opsets) {
  QStringList parts;
  for (const auto& [domain, version] : opsets) parts << QStringLiteral("%1 %2").arg(formatDomain(domain)).arg(version);
  return parts.join(QStringLiteral(", "));
}

}  // namespace kiln::bridge
