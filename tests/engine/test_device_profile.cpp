// Device profiles: the live device round-trips through JSON, the shipped profiles parse, and malformed files are
// INVALID_ARGUMENT naming the field (NO_SUCHFILE when missing).
#include <gtest/gtest.h>

#include <fstream>

#include "device/device_profile.h"
#include "gtest_requirements.h"
#include "kiln/device.h"
#include "test_models.h"

namespace kiln {
namespace {

const std::string kProfiles = std::string(KILN_SOURCE_DIR) + "/resources/profiles/";

std::string readText(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(DeviceProfile, LiveDeviceRoundTrips) {
  REQUIRE_VULKAN();
  auto devices = listVulkanDevices();
  ASSERT_TRUE(devices.isOk()) << devices.status().toString();
  auto json = vulkanDeviceProfile(0);
  ASSERT_TRUE(json.isOk()) << json.status().toString();
  auto parsed = vk::parseDeviceProfile(*json, "live");
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  EXPECT_EQ(vk::deviceProfileJson(*parsed), *json);
  EXPECT_EQ(parsed->name, (*devices)[0].name);
}

TEST(DeviceProfile, ShippedProfilesParse) {
  auto minimal = readVulkanDeviceProfile(kProfiles + "vulkan11_minimal.json");
  ASSERT_TRUE(minimal.isOk()) << minimal.status().toString();
  EXPECT_EQ(minimal->apiVersion, "1.1.0");
  EXPECT_FALSE(minimal->storageBuffer8Bit);
  EXPECT_FALSE(minimal->pushDescriptors);
  EXPECT_EQ(minimal->maxComputeWorkGroupInvocations, 128u);
  auto lavapipe = readVulkanDeviceProfile(kProfiles + "lavapipe.json");
  ASSERT_TRUE(lavapipe.isOk()) << lavapipe.status().toString();
  EXPECT_EQ(lavapipe->type, VulkanDeviceType::CPU);
  EXPECT_FALSE(lavapipe->usedByDefault);
}

TEST(DeviceProfile, DeviceTypeSpellingsRoundTrip) {
  for (auto type : {VulkanDeviceType::DISCRETE, VulkanDeviceType::INTEGRATED, VulkanDeviceType::VIRTUAL,
                    VulkanDeviceType::CPU, VulkanDeviceType::OTHER}) {
    EXPECT_EQ(parseVulkanDeviceType(vulkanDeviceTypeName(type)).value(), type);
  }
  EXPECT_EQ(vulkanDeviceTypeName(VulkanDeviceType::DISCRETE), std::string("discrete"));
  EXPECT_EQ(parseVulkanDeviceType("Discrete").status().code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(parseVulkanDeviceType("").status().code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(parseVulkanDeviceType("gpu").status().message().find("'gpu'"), std::string::npos);
}

TEST(DeviceProfile, MalformedProfilesNameTheProblem) {
  const std::string good = readText(kProfiles + "vulkan11_minimal.json");
  auto expectError = [](const std::string& text, const std::string& needle) {
    auto parsed = vk::parseDeviceProfile(text, "'test.json'");
    ASSERT_FALSE(parsed.isOk()) << "accepted: " << text.substr(0, 80);
    EXPECT_EQ(parsed.status().code(), StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(parsed.status().message().find(needle), std::string::npos) << parsed.status().message();
  };
  expectError("{not json", "is not JSON");
  expectError("{}", "kiln_device_profile");
  std::string future = good;
  future.replace(future.find("\"kiln_device_profile\": 1"), 24, "\"kiln_device_profile\": 9");
  expectError(future, "has format 9");
  std::string missing = good;
  missing.replace(missing.find("\"max_push_constants_size\""), 25, "\"renamed_field_xxxxxxxxxx\"");
  expectError(missing, "limits.max_push_constants_size");
  std::string mistyped = good;
  mistyped.replace(mistyped.find("\"shader_int64\": false"), 21, "\"shader_int64\": \"no\"");
  expectError(mistyped, "features.shader_int64");
  std::string badUuid = good;
  badUuid.replace(badUuid.find("00000000000000000000000000000000"), 32, "zz");
  expectError(badUuid, "pipeline_cache_uuid");
  std::string badType = good;
  const size_t type = badType.find("\"type\": \"");
  ASSERT_NE(type, std::string::npos);
  badType.replace(type, 9, "\"type\": \"gpu-ish");
  expectError(badType, "'identity.type' must be discrete, integrated, virtual, cpu or other, got 'gpu-ish");

  testing::TempDir dir;
  auto absent = readVulkanDeviceProfile(dir.file("none.json"));
  ASSERT_FALSE(absent.isOk());
  EXPECT_EQ(absent.status().code(), StatusCode::NO_SUCHFILE);
}

}  // namespace
}  // namespace kiln
