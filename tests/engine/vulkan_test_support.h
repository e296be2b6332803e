// Shared by the tests that need a Vulkan device: they skip without one unless KILN_REQUIRE_VULKAN=1 (CI, where
// lavapipe is always installed), in which case a missing device fails.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "kiln/device.h"
#include "kiln/session_options.h"

namespace kiln::testing {

inline bool vulkanAvailable() {
  auto devices = listVulkanDevices();
  const bool required = std::getenv("KILN_REQUIRE_VULKAN") && std::string(std::getenv("KILN_REQUIRE_VULKAN")) == "1";
  if (!devices.isOk() || devices->empty()) {
    if (required) ADD_FAILURE() << "KILN_REQUIRE_VULKAN=1 but no Vulkan device: " << devices.status().toString();
    return false;
  }
  return true;
}

#define REQUIRE_VULKAN()                                                            \
  do {                                                                              \
    if (!::kiln::testing::vulkanAvailable()) GTEST_SKIP() << "no Vulkan device on this machine"; \
  } while (0)

// Options that ask for the Vulkan EP explicitly (so lavapipe counts), with the CPU EP as fallback.
inline SessionOptions vulkanOptions() {
  SessionOptions options;
  EXPECT_TRUE(options.addConfigEntry("kiln.execution_providers", "vulkan,cpu").isOk());
  return options;
}

}  // namespace kiln::testing
