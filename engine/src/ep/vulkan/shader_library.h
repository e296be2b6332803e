// The shader library: GLSL compute shaders from shaders/ (embedded as text at build time), compiled at run time
// by glslang with device-specific defines into SPIR-V. Compiled modules are kept per process, keyed by the
// variant, so identical requests compile once.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kiln/status.h"

namespace kiln::vk {

struct DeviceInfo;

// One compute pipeline's recipe: a shader from shaders/ plus defines (the variant) and the workgroup size.
// `bindings` storage buffers sit at set 0, bindings 0..n-1; every pipeline has a 128-byte push-constant range.
struct ShaderVariant {
  std::string shader;  // file stem in shaders/, e.g. "binary"
  std::vector<std::pair<std::string, std::string>> defines;
  uint32_t bindings = 2;
  uint32_t localSizeX = 64, localSizeY = 1, localSizeZ = 1;

  ShaderVariant& define(std::string name, std::string value = "1");
  ShaderVariant& define(std::string name, int64_t value) { return define(std::move(name), std::to_string(value)); }
  // Canonical text of everything that determines the SPIR-V and pipeline (sorted defines).
  std::string key() const;
};

constexpr uint32_t kPushConstantBytes = 128;

// The embedded GLSL of `shader`, or nullptr.
const std::string* shaderSource(const std::string& shader);
// Names of every embedded shader.
std::vector<std::string> shaderNames();

struct SpirvResult {
  std::vector<uint32_t> words;
  bool cacheHit = false;  // served from the process-wide SPIR-V cache (no glslang run)
  double glslangMs = 0;
};

// Compiles a variant for a device (adds device defines: SUBGROUP_SIZE, HAS_FP16, ...). EP_FAIL names the shader,
// the variant and glslang's log when compilation fails.
Result<SpirvResult> compileShader(const ShaderVariant& variant, const DeviceInfo& device);

// The 64-bit key of the SPIR-V compileShader produces for `variant` on `device` (the pipeline cache file's entry
// key): a hash of everything glslang is given — the shader's text and the text of every file it includes, the
// variant key, the preamble of device and variant defines — and of glslang's version and target settings. Editing
// one shader therefore invalidates only the entries compiled from it (ncnn's per-shader source hash).
uint64_t spirvKey(const ShaderVariant& variant, const DeviceInfo& device);

// The compiler and its settings as text ("glslang 12.0.0 vulkan 65792 spirv 66304 optimized"), hashed into every
// spirvKey and part of a compile's identity.
std::string compilerTag();

}  // namespace kiln::vk
