// What `kiln compile` and the studio's compile form ask for, mapped onto kiln::ModelCompilationOptions in one place,
// so the two tools compile a model the same way for the same choices.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/compiler.h"
#include "kiln/status.h"

namespace kiln::app {

struct CompileSettings {
  std::string inputModel;               // empty: set by the caller (kiln compile --share compiles several)
  std::string outputModel;              // -o; empty: kiln::defaultCtxModelPath(inputModel)
  bool embedMode = false;               // --embed-mode 1
  std::string nodeNamePrefix;           // --prefix (one model)
  std::string externalInitializersFile;  // --ext-initializers, relative to the output model
  int64_t externalThreshold = 1024;     // --ext-threshold, bytes
  bool errorIfOutputExists = false;     // --error-if-exists
  bool errorIfNoNodesCompiled = false;  // --error-if-no-nodes
  std::string device;                   // --device: index or name substring; empty: the engine's default
  std::string targetProfile;            // --target-profile: a device profile JSON instead of the live device
  std::string optimizationLevel;        // --optimization-level: none | basic | all; empty: the engine's default
  bool autotune = false;                // --autotune
  std::vector<std::string> shapes;      // --shape NAME=1x3x640x640 entries
  std::vector<std::string> configs;     // --config KEY=VALUE entries
};

// The session options (config entries, kiln.vulkan.device, kiln.vulkan.autotune, the input shapes) and compile
// options `settings` describe. INVALID_ARGUMENT for a malformed entry or a negative threshold; the shapes are
// checked against the model when it compiles. The progress sink is left to the caller.
Result<ModelCompilationOptions> compilationOptionsFor(const CompileSettings& settings);

}  // namespace kiln::app
