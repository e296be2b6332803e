#include "compile_settings.h"

#include "kiln/config_keys.h"
#include "session_flags.h"
#include "shape_syntax.h"

namespace kiln::app {

Result<ModelCompilationOptions> compilationOptionsFor(const CompileSettings& settings) {
  SessionOptions session;
  KILN_RETURN_IF_ERROR(applyConfigEntries(settings.configs, session));
  if (!settings.device.empty()) KILN_RETURN_IF_ERROR(session.addConfigEntry(config::kVulkanDevice, settings.device));
  if (settings.autotune) KILN_RETURN_IF_ERROR(session.addConfigEntry(config::kVulkanAutotune, "1"));
  KILN_RETURN_IF_ERROR(applyShapeEntries(settings.shapes, session).status());
  ModelCompilationOptions options(std::move(session));
  options.setEpContextEmbedMode(settings.embedMode);
  if (!settings.targetProfile.empty()) options.setTargetProfile(settings.targetProfile);
  if (!settings.optimizationLevel.empty()) {
    KILN_ASSIGN_OR_RETURN(const GraphOptimizationLevel level, parseGraphOptimizationLevel(settings.optimizationLevel));
    options.setGraphOptimizationLevel(level);
  }
  if (!settings.externalInitializersFile.empty()) {
    if (settings.externalThreshold < 0) {
      return Status(StatusCode::INVALID_ARGUMENT, "the external initializer threshold must not be negative");
    }
    options.setOutputModelExternalInitializersFile(settings.externalInitializersFile,
                                                   static_cast<size_t>(settings.externalThreshold));
  }
  options.setFlags(flagIf(settings.errorIfOutputExists, CompileFlags::ERROR_IF_OUTPUT_FILE_EXISTS) |
                   flagIf(settings.errorIfNoNodesCompiled, CompileFlags::ERROR_IF_NO_NODES_COMPILED));
  if (!settings.inputModel.empty()) options.setInputModelPath(settings.inputModel);
  if (!settings.outputModel.empty()) options.setOutputModelPath(settings.outputModel);
  if (!settings.nodeNamePrefix.empty()) options.setNodeNamePrefix(settings.nodeNamePrefix);
  return options;
}

}  // namespace kiln::app
