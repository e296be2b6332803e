// What a test may skip, and when it must fail instead: the one place the test suites (GoogleTest, QtTest) ask.
// KILN_REQUIRE_VULKAN=1 (CI, where lavapipe is always installed) turns "no Vulkan device" into a failure;
// KILN_REQUIRE_MODELS=1 turns "real model not cached" into a failure. Header-only, no test framework.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace kiln::testing {

// True when the environment variable `name` is exactly "1".
inline bool envFlag(const char* name) {
  const char* value = std::getenv(name);
  return value && std::string(value) == "1";
}

// A missing Vulkan device fails the test instead of skipping it.
inline bool vulkanRequired() { return envFlag("KILN_REQUIRE_VULKAN"); }
// A missing real model (tests/tools/fetch_models.sh) fails the test instead of skipping it.
inline bool modelsRequired() { return envFlag("KILN_REQUIRE_MODELS"); }

// Where fetch_models.sh keeps the real models: KILN_MODEL_CACHE, else ${KILN_CACHE_DIR:-$HOME/.cache/kiln}/models.
inline std::filesystem::path modelCache() {
  auto env = [](const char* name) -> std::string {
    const char* value = std::getenv(name);
    return value ? value : "";
  };
  if (!env("KILN_MODEL_CACHE").empty()) return env("KILN_MODEL_CACHE");
  if (!env("KILN_CACHE_DIR").empty()) return std::filesystem::path(env("KILN_CACHE_DIR")) / "models";
  const std::string home = env("HOME").empty() ? "/nonexistent" : env("HOME");
  return std::filesystem::path(home) / ".cache" / "kiln" / "models";
}

}  // namespace kiln::testing
