#include "ep/vulkan/shader_library.h"

#include <glslang/Public/ResourceLimits.h>
#include <glslang/Public/ShaderLang.h>
#include <glslang/SPIRV/GlslangToSpv.h>
#include <glslang/build_info.h>
#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t on the stack
#include <xxhash.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include "ep/vulkan/embedded_shaders.h"
#include "ep/vulkan/vulkan_device.h"
#include "util/stopwatch.h"

namespace kiln::vk {
namespace {

// glslang's process-wide state: initialized once, never finalized (other threads may still compile).
void ensureGlslangInitialized() {
  static std::once_flag once;
  std::call_once(once, [] { glslang::InitializeProcess(); });
}

// glslang's target: one place, because spirvKey hashes it (a change must invalidate cached SPIR-V).
constexpr glslang::EShTargetClientVersion kTargetVulkan = glslang::EShTargetVulkan_1_1;
constexpr glslang::EShTargetLanguageVersion kTargetSpirv = glslang::EShTargetSpv_1_3;
constexpr bool kSpirvOptimizer = true;

}  // namespace

std::string compilerTag() {
  return "glslang " + std::to_string(GLSLANG_VERSION_MAJOR) + "." + std::to_string(GLSLANG_VERSION_MINOR) + "." +
         std::to_string(GLSLANG_VERSION_PATCH) + GLSLANG_VERSION_FLAVOR + " vulkan " +
         std::to_string(static_cast<int>(kTargetVulkan)) + " spirv " + std::to_string(static_cast<int>(kTargetSpirv)) +
         (kSpirvOptimizer ? " optimized" : "");
}

namespace {

// The defines a device contributes to every variant (part of the cache key, so two devices with different
// features never share SPIR-V).
std::vector<std::pair<std::string, std::string>> deviceDefines(const DeviceInfo& device) {
  return {{"SUBGROUP_SIZE", std::to_string(device.subgroupSize)},
          {"HAS_SUBGROUP_ARITHMETIC", device.subgroupArithmetic ? "1" : "0"},
          {"HAS_FP16", device.shaderFloat16 && device.storageBuffer16Bit ? "1" : "0"},
          {"HAS_INT64", device.shaderInt64 ? "1" : "0"}};
}

std::string preamble(const ShaderVariant& variant, const DeviceInfo& device) {
  std::string text;
  auto add = [&](const std::string& name, const std::string& value) { text += "#define " + name + " " + value + "\n"; };
  for (const auto& [name, value] : deviceDefines(device)) add(name, value);
  add("LOCAL_SIZE_X", std::to_string(variant.localSizeX));
  add("LOCAL_SIZE_Y", std::to_string(variant.localSizeY));
  add("LOCAL_SIZE_Z", std::to_string(variant.localSizeZ));
  for (const auto& [name, value] : variant.defines) add(name, value);
  return text;
}

// Resolves `#include "name.glsl"` against the embedded shared text of shaders/*.glsl.
class EmbeddedIncluder final : public glslang::TShader::Includer {
 public:
  IncludeResult* includeLocal(const char* headerName, const char*, size_t) override { return find(headerName); }
  IncludeResult* includeSystem(const char* headerName, const char*, size_t) override { return find(headerName); }
  void releaseInclude(IncludeResult* result) override { delete result; }

 private:
  static IncludeResult* find(const char* headerName) {
    const std::string* text = shaderSource(headerName);
    if (!text) return nullptr;
    return new IncludeResult(headerName, text->data(), text->size(), nullptr);
  }
};

struct SpirvCache {
  std::mutex mutex;
  std::map<std::string, std::vector<uint32_t>> modules;
};

SpirvCache& spirvCache() {
  static SpirvCache cache;
  return cache;
}

}  // namespace

ShaderVariant& ShaderVariant::define(std::string name, std::string value) {
  defines.emplace_back(std::move(name), std::move(value));
  return *this;
}

std::string ShaderVariant::key() const {
  auto sorted = defines;
  std::sort(sorted.begin(), sorted.end());
  std::string text = shader + "|b" + std::to_string(bindings) + "|l" + std::to_string(localSizeX) + "x" +
                     std::to_string(localSizeY) + "x" + std::to_string(localSizeZ);
  for (const auto& [name, value] : sorted) text += "|" + name + "=" + value;
  return text;
}

const std::string* shaderSource(const std::string& shader) {
  static const std::map<std::string, std::string> sources = [] {
    std::map<std::string, std::string> map;
    for (const auto& entry : embeddedShaders()) map.emplace(entry.name, entry.source);
    return map;
  }();
  auto it = sources.find(shader);
  return it == sources.end() ? nullptr : &it->second;
}

std::vector<std::string> shaderNames() {
  std::vector<std::string> names;
  for (const auto& entry : embeddedShaders()) names.emplace_back(entry.name);
  return names;
}

Result<SpirvResult> compileShader(const ShaderVariant& variant, const DeviceInfo& device) {
  const std::string* source = shaderSource(variant.shader);
  if (!source) return Status(StatusCode::EP_FAIL, "no shader named '" + variant.shader + "' in the shader library");
  std::string key = variant.key();
  for (const auto& [name, value] : deviceDefines(device)) key += "|" + name + "=" + value;
  {
    std::lock_guard lock(spirvCache().mutex);
    auto it = spirvCache().modules.find(key);
    if (it != spirvCache().modules.end()) return SpirvResult{it->second, true, 0};
  }

  ensureGlslangInitialized();
  Stopwatch clock;
  const std::string header = preamble(variant, device);
  glslang::TShader shader(EShLangCompute);
  const char* text = source->c_str();
  const char* names = variant.shader.c_str();
  shader.setStringsWithLengthsAndNames(&text, nullptr, &names, 1);
  shader.setPreamble(header.c_str());
  shader.setEnvInput(glslang::EShSourceGlsl, EShLangCompute, glslang::EShClientVulkan, 100);
  shader.setEnvClient(glslang::EShClientVulkan, kTargetVulkan);
  shader.setEnvTarget(glslang::EShTargetSpv, kTargetSpirv);
  const auto messages = static_cast<EShMessages>(EShMsgSpvRules | EShMsgVulkanRules);
  auto failure = [&](const char* stage, const char* log) {
    return Status(StatusCode::EP_FAIL, "shader '" + variant.shader + "' (" + variant.key() + ") failed to " + stage +
                                           ": " + std::string(log));
  };
  EmbeddedIncluder includer;
  if (!shader.parse(GetDefaultResources(), 450, false, messages, includer)) return failure("compile", shader.getInfoLog());
  glslang::TProgram program;
  program.addShader(&shader);
  if (!program.link(messages)) return failure("link", program.getInfoLog());
  SpirvResult result;
  glslang::SpvOptions options;
  options.disableOptimizer = !kSpirvOptimizer;
  options.optimizeSize = false;
  glslang::GlslangToSpv(*program.getIntermediate(EShLangCompute), result.words, &options);
  result.glslangMs = clock.elapsedMs();
  std::lock_guard lock(spirvCache().mutex);
  spirvCache().modules.emplace(key, result.words);
  return result;
}

namespace {

// The names a source includes (`#include "name"` lines), in order.
std::vector<std::string> includedNames(const std::string& source) {
  std::vector<std::string> names;
  std::istringstream lines(source);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line.compare(start, 8, "#include") != 0) continue;
    const size_t open = line.find('"', start + 8);
    const size_t close = open == std::string::npos ? open : line.find('"', open + 1);
    if (close != std::string::npos) names.push_back(line.substr(open + 1, close - open - 1));
  }
  return names;
}

// Feeds `name`'s text and, depth first, the text of everything it includes (each file once) into `state`.
void hashSourceTree(XXH3_state_t* state, const std::string& name, std::set<std::string>& seen) {
  if (!seen.insert(name).second) return;
  const std::string* text = shaderSource(name);
  const std::string tagged = name + (text ? "\n" : " (missing)\n");
  XXH3_64bits_update(state, tagged.data(), tagged.size());
  if (!text) return;
  XXH3_64bits_update(state, text->data(), text->size());
  for (const auto& included : includedNames(*text)) hashSourceTree(state, included, seen);
}

}  // namespace

uint64_t spirvKey(const ShaderVariant& variant, const DeviceInfo& device) {
  XXH3_state_t stateStorage;
  XXH3_state_t* state = &stateStorage;
  XXH3_64bits_reset(state);
  // Each part ends with a separator byte so that adjacent parts cannot trade characters.
  auto add = [state](const std::string& part) {
    XXH3_64bits_update(state, part.data(), part.size());
    XXH3_64bits_update(state, "\0", 1);
  };
  add(compilerTag());
  add(variant.key());
  add(preamble(variant, device));
  std::set<std::string> seen;
  hashSourceTree(state, variant.shader, seen);
  return XXH3_64bits_digest(state);
}

}  // namespace kiln::vk
