// How the studio spells engine values: element types, shapes, byte sizes and opsets, as display strings.
#pragma once

#include <QString>

#include <cstdint>
#include <map>
#include <string>

#include "kiln/session.h"

namespace kiln::bridge {

// NumPy-style element type names, as model viewers show them: "float32", "int64", "float16", "bool"; "?" if unknown.
QString elementTypeName(DataType type);
// "[1,3,640,640]"; symbolic dims by name ("[batch,3,h,w]"), unknown dims as "?", a scalar as "[]", no shape as "[...]".
QString formatShape(const ValueMetadata& value);
// Element type and shape: "float32[1,3,640,640]".
QString formatValueType(const ValueMetadata& value);
// Human-readable size in binary units: "812 B", "1.5 KiB", "23.4 MiB".
QString formatByteSize(int64_t bytes);
// The domain as ONNX names it, with the default domain spelled out: "" -> "ai.onnx".
QString formatDomain(const std::string& domain);
// "ai.onnx 17, com.microsoft 1" in domain order.
QString formatOpsets(const std::map<std::string, int64_t>& opsets);

}  // namespace kiln::bridge
