// kiln/tensor_io.h: TensorProto (.pb) and NumPy (.npy, format 1.0-3.0) files.
#include <charconv>
#include <cstring>
#include <filesystem>

#include "kiln/tensor_io.h"
#include "kiln/tensor_size.h"
#include "onnx/tensor_proto.h"
#include "util/file_io.h"

namespace kiln {
namespace {

struct NpyType {
  const char* descr;
  DataType type;
};
constexpr NpyType kNpyTypes[] = {
    {"<f4", DataType::FLOAT},   {"<f8", DataType::DOUBLE},  {"<f2", DataType::FLOAT16}, {"|i1", DataType::INT8},
    {"|u1", DataType::UINT8},   {"<i2", DataType::INT16},   {"<u2", DataType::UINT16},  {"<i4", DataType::INT32},
    {"<u4", DataType::UINT32},  {"<i8", DataType::INT64},   {"<u8", DataType::UINT64},  {"|b1", DataType::BOOL},
};

Status npyError(const std::string& path, const std::string& why) {
  return Status(StatusCode::INVALID_ARGUMENT, "'" + path + "' is not a supported .npy file: " + why);
}

// Extracts the value of 'key' from the header dict text, e.g. 'descr': '<f4'.
std::string headerField(const std::string& header, const std::string& key) {
  const size_t at = header.find("'" + key + "'");
  if (at == std::string::npos) return {};
  size_t start = header.find(':', at);
  if (start == std::string::npos) return {};
  ++start;
  while (start < header.size() && header[start] == ' ') ++start;
  if (start >= header.size()) return {};
  if (header[start] == '\'') {
    const size_t end = header.find('\'', start + 1);
    return end == std::string::npos ? std::string() : header.substr(start + 1, end - start - 1);
  }
  if (header[start] == '(') {
    const size_t end = header.find(')', start);
    return end == std::string::npos ? std::string() : header.substr(start, end - start + 1);
  }
  const size_t end = header.find_first_of(",}", start);
  return header.substr(start, end - start);
}

}  // namespace

Result<Tensor> readTensorProtoFile(const std::string& path, std::string* name) {
  KILN_ASSIGN_OR_RETURN(const std::vector<std::byte> bytes, readFileBytes(path));
  onnx::TensorProto proto;
  if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return Status(StatusCode::INVALID_PROTOBUF, "'" + path + "' is not a serialized TensorProto");
  }
  if (name) *name = proto.name();
  auto tensor = onnx_io::tensorFromProto(proto);
  if (!tensor.isOk()) return tensor.status().withContext("reading '" + path + "'");
  return tensor;
}

Result<Tensor> readNpyFile(const std::string& path) {
  KILN_ASSIGN_OR_RETURN(const std::vector<std::byte> bytes, readFileBytes(path));
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  if (bytes.size() < 10 || std::memcmp(data, "\x93NUMPY", 6) != 0) return npyError(path, "bad magic");
  const int major = data[6];
  size_t headerLength = 0, headerStart = 0;
  if (major == 1) {
    headerLength = data[8] | (data[9] << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return npyError(path, "truncated header");
    headerLength = data[8] | (data[9] << 8) | (data[10] << 16) | (static_cast<size_t>(data[11]) << 24);
    headerStart = 12;
  } else {
    return npyError(path, "format version " + std::to_string(major));
  }
  if (headerStart + headerLength > bytes.size()) return npyError(path, "truncated header");
  const std::string header(reinterpret_cast<const char*>(data + headerStart), headerLength);
  const std::string descr = headerField(header, "descr");
  DataType type = DataType::UNDEFINED;
  for (const auto& entry : kNpyTypes) {
    if (descr == entry.descr || (descr.size() == 3 && descr[0] == '|' && std::string("<") + descr.substr(1) == entry.descr)) {
      type = entry.type;
    }
  }
  if (descr == "<i1" || descr == "<u1" || descr == "<b1") {
    for (const auto& entry : kNpyTypes) {
      if (std::string("|") + descr.substr(1) == entry.descr) type = entry.type;
    }
  }
  if (type == DataType::UNDEFINED) return npyError(path, "dtype '" + descr + "'");
  if (headerField(header, "fortran_order").find("True") != std::string::npos) return npyError(path, "Fortran order");
  Shape shape;
  const std::string shapeText = headerField(header, "shape");
  if (shapeText.empty() || shapeText.front() != '(') return npyError(path, "no shape");
  size_t pos = 1;
  while (pos < shapeText.size()) {
    while (pos < shapeText.size() && (shapeText[pos] == ' ' || shapeText[pos] == ',')) ++pos;
    if (pos >= shapeText.size() || shapeText[pos] == ')') break;
    size_t end = pos;
    while (end < shapeText.size() && std::isdigit(static_cast<unsigned char>(shapeText[end]))) ++end;
    if (end == pos) return npyError(path, "bad shape '" + shapeText + "'");
    int64_t dim = 0;
    const auto parsed = std::from_chars(shapeText.data() + pos, shapeText.data() + end, dim);
    if (parsed.ec != std::errc()) {
      return npyError(path, "dimension " + shapeText.substr(pos, end - pos) + " is out of range");
    }
    shape.push_back(dim);
    pos = end;
  }
  // Checked against the data the file holds before allocating: a header cannot make us allocate terabytes.
  const size_t payload = bytes.size() - headerStart - headerLength;
  if (!checkedTensorBytes(type, shape, payload, "the data").isOk()) {
    return npyError(path, "data (" + std::to_string(payload) + " bytes) is shorter than shape " + shapeToString(shape));
  }
  Tensor tensor(type, shape);
  if (tensor.byteSize()) std::memcpy(tensor.rawData(), data + headerStart + headerLength, tensor.byteSize());
  return tensor;
}

Result<Tensor> readTensorFile(const std::string& path) {
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext == ".npy") return readNpyFile(path);
  if (ext == ".pb") return readTensorProtoFile(path);
  return Status(StatusCode::INVALID_ARGUMENT, "'" + path + "': tensor files must end in .npy or .pb");
}

Status writeNpyFile(const std::string& path, const Tensor& tensor) {
  const char* descr = nullptr;
  for (const auto& entry : kNpyTypes) {
    if (entry.type == tensor.dtype()) descr = entry.descr;
  }
  if (!descr) {
    return Status(StatusCode::INVALID_ARGUMENT, std::string("cannot write ") + dataTypeName(tensor.dtype()) + " as .npy");
  }
  std::string shape = "(";
  for (int64_t d : tensor.shape()) shape += std::to_string(d) + ", ";
  if (tensor.rank() > 1) shape.resize(shape.size() - 1), shape.back() = ')';
  else shape += ")";
  if (tensor.rank() == 1) shape = "(" + std::to_string(tensor.dim(0)) + ",)";
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  const size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string prefix("\x93NUMPY\x01\x00", 8);
  prefix += static_cast<char>(header.size() & 0xff);
  prefix += static_cast<char>((header.size() >> 8) & 0xff);
  prefix += header;
  return writeFileAtomically(path, [&](const auto& write) {
    KILN_RETURN_IF_ERROR(write(std::as_bytes(std::span(prefix.data(), prefix.size()))));
    return write(std::span(static_cast<const std::byte*>(tensor.rawData()), tensor.byteSize()));
  });
}

}  // namespace kiln
