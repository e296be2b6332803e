#include "session/package_session.h"

#include "kiln/model_package.h"
#include "util/log.h"

namespace kiln {

Result<std::unique_ptr<Session>> createSessionFromPackage(const std::string& path, const SessionOptions& options) {
  KILN_ASSIGN_OR_RETURN(const ModelPackage package, readModelPackage(path));
  KILN_ASSIGN_OR_RETURN(const PackageChoice choice, choosePackageVariant(package, options));
  for (size_t i = 0; i < choice.judged.size(); ++i) {
    if (static_cast<int>(i) == choice.chosen) continue;
    const auto& judged = choice.judged[i];
    log::info("model package: variant {} not chosen ({}{})", judged.variant, compiledModelCompatibilityName(judged.state),
              judged.reasons.empty() ? std::string() : ": " + judged.reasons.front());
  }
  log::info("{}", choice.summary);
  SessionOptions chosen = options;
  for (const auto& [key, value] : choice.sessionOptions) KILN_RETURN_IF_ERROR(chosen.addConfigEntry(key, value));
  auto session = Session::create(choice.modelPath, chosen);
  if (!session.isOk()) return session.status().withContext(choice.summary);
  return session;
}

}  // namespace kiln
