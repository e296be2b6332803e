// The ctx model's compatibility info (context_binary/compatibility_info.h): what it alone proves about a device, and
// when it must defer to the binary.
#include <gtest/gtest.h>

#include "context_binary/compatibility_info.h"
#include "device/device_profile.h"

namespace kiln::ctxbin {
namespace {

vk::DeviceInfo lavapipe() {
  auto device = vk::readDeviceProfile(std::string(KILN_SOURCE_DIR) + "/resources/profiles/lavapipe.json");
  EXPECT_TRUE(device.isOk()) << device.status().toString();
  return device.isOk() ? *device : vk::DeviceInfo{};
}

// An info string as compatibilityInfoFor writes it for a binary compiled on `d` with no special requirements.
std::string infoFor(const vk::DeviceInfo& d, const std::string& overrides = "") {
  return "kiln;version=0.1.0;binary_format=1.0;readable=0.1.0-0.1023.1023;target=device;driver_cache=1;vendor_id=" +
         std::to_string(d.vendorId) + ";device_id=" + std::to_string(d.deviceId) + ";driver_id=" +
         std::to_string(d.driverId) + ";driver_version=" + std::to_string(d.driverVersion) + ";api_version=" +
         std::to_string(d.apiVersion) + ";required_features=0;subgroup_size=0;workgroup_invocations=64;" +
         "workgroup_size=64,1,1;push_constant_bytes=16;pipeline_cache_uuid=" + d.pipelineCacheUuidHex() +
         ";device=" + d.name + ";driver=" + d.driverInfo + overrides;
}

TEST(CompatibilityInfo, SameDeviceAndDriverIsOptimal) {
  const vk::DeviceInfo d = lavapipe();
  auto verdict = judgeCompatibilityInfo(infoFor(d), d, "here");
  ASSERT_TRUE(verdict.has_value());
  EXPECT_EQ(verdict->compatibility, Compatibility::OPTIMAL);
  EXPECT_EQ(verdict->against, "here");
}

TEST(CompatibilityInfo, AnotherDriverOrAProfileCompileDefersToTheBinary) {
  vk::DeviceInfo d = lavapipe();
  EXPECT_FALSE(judgeCompatibilityInfo(infoFor(d, ";target=profile"), d, "").has_value());  // later fields win
  EXPECT_FALSE(judgeCompatibilityInfo(infoFor(d, ";driver_cache=0"), d, "").has_value());
  const std::string info = infoFor(d);
  d.driverInfo += " (other build)";
  EXPECT_FALSE(judgeCompatibilityInfo(info, d, "").has_value());
}

TEST(CompatibilityInfo, MissingFeatureOrOtherFormatIsUnsupportedWithoutTheBinary) {
  vk::DeviceInfo d = lavapipe();
  const std::string info = infoFor(d, ";required_features=1;subgroup_size=8");
  d.subgroupArithmetic = false;
  auto verdict = judgeCompatibilityInfo(info, d, "");
  ASSERT_TRUE(verdict.has_value());
  EXPECT_EQ(verdict->compatibility, Compatibility::UNSUPPORTED);
  ASSERT_FALSE(verdict->reasons.empty());
  EXPECT_NE(verdict->reasons[0].find("subgroup_arithmetic"), std::string::npos) << verdict->reasons[0];

  auto format = judgeCompatibilityInfo(infoFor(lavapipe(), ";binary_format=7.2"), lavapipe(), "");
  ASSERT_TRUE(format.has_value());
  EXPECT_EQ(format->compatibility, Compatibility::UNSUPPORTED);
  EXPECT_NE(format->reasons.at(0).find("7.2"), std::string::npos) << format->reasons.at(0);
  auto readable = judgeCompatibilityInfo(infoFor(lavapipe(), ";readable=9.0.0-9.1.0"), lavapipe(), "");
  ASSERT_TRUE(readable.has_value());
  EXPECT_EQ(readable->compatibility, Compatibility::UNSUPPORTED);
}

TEST(CompatibilityInfo, OlderOrForeignOrMalformedInfoDefersToTheBinary) {
  const vk::DeviceInfo d = lavapipe();
  // What Kiln wrote before requirements were recorded: identity only.
  const std::string older = "kiln;version=0.1.0;binary_format=1.0;device=" + d.name + ";driver=" + d.driverInfo +
                            ";pipeline_cache_uuid=" + d.pipelineCacheUuidHex();
  EXPECT_FALSE(judgeCompatibilityInfo(older, d, "").has_value());
  EXPECT_FALSE(judgeCompatibilityInfo("example_ep;version=0.1.0", d, "").has_value());
  EXPECT_FALSE(judgeCompatibilityInfo("", d, "").has_value());
  EXPECT_FALSE(judgeCompatibilityInfo(infoFor(d, ";workgroup_size=64,x"), d, "").has_value());
  EXPECT_FALSE(judgeCompatibilityInfo(infoFor(d, ";subgroup_size=-1"), d, "").has_value());
}

TEST(CompatibilityInfo, NamesWithSeparatorsRoundTripEscaped) {
  vk::DeviceInfo d = lavapipe();
  d.name = "GPU; rev=2 100%";
  const std::string escaped = "GPU%3B rev=2 100%25";
  std::string info = infoFor(d);
  info.replace(info.find(d.name), d.name.size(), escaped);
  auto verdict = judgeCompatibilityInfo(info, d, "");
  ASSERT_TRUE(verdict.has_value());
  EXPECT_EQ(verdict->compatibility, Compatibility::OPTIMAL);
}

}  // namespace
}  // namespace kiln::ctxbin

#include "epcontext/compile_record.h"
#include "kiln/version.h"

namespace kiln::epctx {
namespace {

TEST(CompileRecord, RoundTripsAndNamesEachKindOfStaleness) {
  CompileRecord record{"00000000000000aa", "src.onnx", {{"kiln.vulkan.fp16", "0"}}, engineVersion(),
                       CompileTarget{"VulkanExecutionProvider: glslang 12", "profile sha:01"}, ""};
  record.identity = compileIdentityOf(record);
  auto decoded = decodeCompileRecord(encodeCompileRecord(record));
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->sourceHash, record.sourceHash);
  EXPECT_EQ(decoded->sourceModel, "src.onnx");
  EXPECT_EQ(decoded->options, record.options);
  EXPECT_EQ(decoded->target.toolchain, record.target.toolchain);
  EXPECT_EQ(decoded->target.device, record.target.device);
  EXPECT_EQ(decoded->identity, record.identity);
  EXPECT_EQ(compileIdentityOf(*decoded), record.identity);

  EXPECT_TRUE(stalenessOf(record, std::string("00000000000000aa"), std::nullopt).reasons.empty());
  const Staleness source = stalenessOf(record, std::string("00000000000000bb"), std::nullopt);
  EXPECT_TRUE(source.sourceChanged);
  ASSERT_EQ(source.reasons.size(), 1u);
  EXPECT_EQ(source.reasons[0].rfind("stale: source changed", 0), 0u);
  const Staleness options = stalenessOf(record, std::nullopt, std::map<std::string, std::string>{{"kiln.vulkan.fp16", "1"}});
  EXPECT_FALSE(options.sourceChanged);
  ASSERT_EQ(options.reasons.size(), 1u);
  EXPECT_NE(options.reasons[0].find("kiln.vulkan.fp16 is '1', compiled with '0'"), std::string::npos);
  record.kilnVersion = "0.0.1";
  EXPECT_EQ(stalenessOf(record, std::nullopt, std::nullopt).reasons.at(0).rfind("stale: Kiln upgraded", 0), 0u);
}

// The identity changes with every part a compile depends on, and only with those (not with where the source lies).
TEST(CompileRecord, IdentityCoversSourceOptionsVersionCompilerAndTarget) {
  const CompileRecord base{"00000000000000aa", "src.onnx", {{"kiln.vulkan.fp16", "0"}}, "0.1.0",
                           CompileTarget{"glslang 12", "device llvmpipe"}, ""};
  const std::string identity = compileIdentityOf(base);
  EXPECT_EQ(identity.size(), 16u);
  CompileRecord moved = base;
  moved.sourceModel = "elsewhere/src.onnx";
  EXPECT_EQ(compileIdentityOf(moved), identity);
  std::vector<CompileRecord> changed(5, base);
  changed[0].sourceHash = "00000000000000ab";
  changed[1].options["kiln.vulkan.fp16"] = "1";
  changed[2].kilnVersion = "0.1.1";
  changed[3].target.toolchain = "glslang 13";
  changed[4].target.device = "device other";
  for (const auto& record : changed) EXPECT_NE(compileIdentityOf(record), identity);
  const Staleness compiler = stalenessOf(base, std::nullopt, std::nullopt, changed[3].target);
  ASSERT_EQ(compiler.reasons.size(), 1u);
  EXPECT_EQ(compiler.reasons[0].rfind("stale: compiler changed", 0), 0u);
  const Staleness device = stalenessOf(base, std::nullopt, std::nullopt, changed[4].target);
  ASSERT_EQ(device.reasons.size(), 1u);
  EXPECT_EQ(device.reasons[0].rfind("stale: target device changed", 0), 0u);
}

TEST(CompileRecord, JunkIsNoRecord) {
  EXPECT_FALSE(decodeCompileRecord("").has_value());
  EXPECT_FALSE(decodeCompileRecord("{").has_value());
  EXPECT_FALSE(decodeCompileRecord("[1]").has_value());
  EXPECT_FALSE(decodeCompileRecord(R"({"source_hash": 3, "kiln_version": "0.1.0"})").has_value());
}

}  // namespace
}  // namespace kiln::epctx
