// Session flags and the compile-options mapping shared by kiln and kiln-studio.
#include <gtest/gtest.h>

#include "compile_settings.h"
#include "session_flags.h"

namespace kiln::app {
namespace {

TEST(SessionFlags, ConfigEntries) {
  SessionOptions options;
  EXPECT_TRUE(applyConfigEntries({"kiln.intra_op_num_threads=2", "session.x=a=b"}, options).isOk());
  EXPECT_EQ(options.configEntryOr("kiln.intra_op_num_threads", ""), "2");
  EXPECT_EQ(options.configEntryOr("session.x", ""), "a=b");
  EXPECT_EQ(applyConfigEntries({"novalue"}, options).code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(applyConfigEntries({"=1"}, options).code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(applyConfigEntries({"kiln.no_such_key=1"}, options).code(), StatusCode::INVALID_ARGUMENT);
}

TEST(SessionFlags, SplitAssignment) {
  const auto kv = splitAssignment("name=a=b", "--input");
  ASSERT_TRUE(kv.isOk());
  EXPECT_EQ(kv->first, "name");
  EXPECT_EQ(kv->second, "a=b");
  const auto bad = splitAssignment("name", "--input");
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.status().message().find("--input 'name'"), std::string::npos);
}

TEST(SessionFlags, ExecutionProviderList) {
  SessionOptions options;
  EXPECT_TRUE(applyExecutionProviders("", options).isOk());
  EXPECT_FALSE(options.configEntry("kiln.execution_providers"));
  EXPECT_TRUE(applyExecutionProviders("vulkan,cpu", options).isOk());
  EXPECT_EQ(options.configEntryOr("kiln.execution_providers", ""), "vulkan,cpu");
  for (const char* bad : {"tpu", "vulkan,", ",cpu", "cpu,,vulkan", "CPU"}) {
    SessionOptions other;
    const Status status = applyExecutionProviders(bad, other);
    EXPECT_EQ(status.code(), StatusCode::INVALID_ARGUMENT) << bad;
    EXPECT_FALSE(other.configEntry("kiln.execution_providers")) << bad;
  }
}

TEST(CompileSettings, MapsEveryField) {
  CompileSettings settings;
  settings.inputModel = "in.onnx";
  settings.outputModel = "out_ctx.onnx";
  settings.device = "1";
  settings.autotune = true;
  settings.shapes = {"image=4x3x32x32"};
  settings.configs = {"kiln.graph_optimization_level=none"};
  settings.embedMode = true;
  settings.errorIfOutputExists = true;
  settings.errorIfNoNodesCompiled = true;
  const auto options = compilationOptionsFor(settings);
  ASSERT_TRUE(options.isOk()) << options.status().toString();
  const SessionOptions& session = options->sessionOptions();
  EXPECT_EQ(session.configEntryOr("kiln.vulkan.device", ""), "1");
  EXPECT_EQ(session.configEntryOr("kiln.vulkan.autotune", ""), "1");
  EXPECT_EQ(session.configEntryOr("kiln.graph_optimization_level", ""), "none");
  EXPECT_EQ(session.inputShapes().at("image"), (Shape{4, 3, 32, 32}));
  EXPECT_TRUE(options->embedMode());
  EXPECT_EQ(options->flags(), CompileFlags::ERROR_IF_OUTPUT_FILE_EXISTS | CompileFlags::ERROR_IF_NO_NODES_COMPILED);
}

TEST(CompileSettings, RejectsBadEntries) {
  CompileSettings settings;
  settings.shapes = {"image=1x99999999999999999999"};
  EXPECT_EQ(compilationOptionsFor(settings).status().code(), StatusCode::INVALID_ARGUMENT);
  settings.shapes.clear();
  settings.externalInitializersFile = "weights.bin";
  settings.externalThreshold = -1;
  EXPECT_EQ(compilationOptionsFor(settings).status().code(), StatusCode::INVALID_ARGUMENT);
  settings.externalThreshold = 0;
  settings.configs = {"kiln.no_such_key=1"};
  EXPECT_EQ(compilationOptionsFor(settings).status().code(), StatusCode::INVALID_ARGUMENT);
}

}  // namespace
}  // namespace kiln::app
