// The GoogleTest side of requirements.h: REQUIRE_VULKAN() and REQUIRE_MODEL_FILE(path) skip the current test, or
// fail it when KILN_REQUIRE_VULKAN=1 / KILN_REQUIRE_MODELS=1 (CI) says the device or the model must be there.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "kiln/device.h"
#include "kiln/session_options.h"
#include "requirements.h"

namespace kiln::testing {

// True when a Vulkan device exists; records a failure when there is none and KILN_REQUIRE_VULKAN=1.
inline bool vulkanAvailable() {
  auto devices = listVulkanDevices();
  if (!devices.isOk() || devices->empty()) {
    if (vulkanRequired()) {
      ADD_FAILURE() << "KILN_REQUIRE_VULKAN=1 but no Vulkan device: "
                    << (devices.isOk() ? std::string("none listed") : devices.status().toString());
    }
    return false;
  }
  return true;
}

// Options that ask for the Vulkan EP explicitly (so lavapipe counts), with the CPU EP as fallback.
inline SessionOptions vulkanOptions() {
  SessionOptions options;
  EXPECT_TRUE(options.addConfigEntry("kiln.execution_providers", "vulkan,cpu").isOk());
  return options;
}

}  // namespace kiln::testing

// Skips the current test without a Vulkan device (fails instead under KILN_REQUIRE_VULKAN=1).
#define REQUIRE_VULKAN()                                                                           \
  do {                                                                                             \
    if (!::kiln::testing::vulkanAvailable()) GTEST_SKIP() << "no Vulkan device on this machine";   \
  } while (0)

// Skips the current test when a real-model file is not cached (fails instead under KILN_REQUIRE_MODELS=1).
#define REQUIRE_MODEL_FILE(file)                                                                                   \
  do {                                                                                                             \
    const std::filesystem::path required_file_ = (file);                                                           \
    if (!std::filesystem::exists(required_file_)) {                                                                \
      const std::string message_ = "missing " + required_file_.string() +                                        \
                                   "; run tests/tools/fetch_models.sh --with-references " +                     \
                                   ::kiln::testing::modelCache().string();                                        \
      if (::kiln::testing::modelsRequired()) FAIL() << message_ << " (KILN_REQUIRE_MODELS=1)";                     \
      GTEST_SKIP() << message_;                                                                                    \
    }                                                                                                              \
  } while (0)
