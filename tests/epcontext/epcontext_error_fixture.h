// The fixture of the EPContext error tests (test_epcontext_errors.cpp, test_epcontext_io_edits.cpp): a temporary
// folder with source models, the Compile API with its defaults, session-option flows, ctx model edits, and snapshots
// proving that files are unchanged.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "epcontext_checks.h"
#include "epcontext_models.h"
#include "kiln/compiler.h"
#include "test_models.h"
#include "gtest_requirements.h"

namespace kiln::testing {

namespace fs = std::filesystem;

// A status must have `code` and contain `fragment`.
#define EXPECT_STATUS(status, expectedCode, fragment)                                                   \
  do {                                                                                                  \
    const ::kiln::Status status_ = (status);                                                            \
    EXPECT_EQ(status_.code(), (expectedCode)) << status_.toString();                                   \
    EXPECT_NE(status_.message().find(fragment), std::string::npos) << "'" << (fragment) << "' not in " \
                                                                   << status_.toString();             \
  } while (0)

class EpContextErrors : public ::testing::Test {
 protected:
  void SetUp() override { root_ = dir_.path(); }

  std::string at(const std::string& relative) const { return (root_ / relative).string(); }
  SourceModel source(const std::string& name = "m", Topology topology = Topology::kTwoPartitions, int variant = 0,
                     const std::string& folder = "") {
    fs::create_directories(root_ / folder);
    return writeSourceModel(topology, (root_ / folder).string(), name, variant, false);
  }

  // The Compile API with its defaults: <stem>_ctx.onnx and <stem>_vulkan.bin beside the source.
  CompileResult compile(const std::string& modelPath, int embed = 0, SessionOptions options = vulkanOptions()) {
    ModelCompilationOptions compileOptions(std::move(options));
    compileOptions.setInputModelPath(modelPath).setEpContextEmbedMode(embed == 1);
    auto result = compileModel(compileOptions);
    EXPECT_TRUE(result.isOk()) << result.status().toString();
    return result.isOk() ? std::move(result).value() : CompileResult{};
  }

  // Session-option flow options: generate, embed mode `embed`.
  static SessionOptions generating(int embed = 0, std::map<std::string, std::string> more = {}) {
    more["ep.context_enable"] = "1";
    more["ep.context_embed_mode"] = std::to_string(embed);
    return withEntries(vulkanOptions(), more);
  }

  Status createStatus(const std::string& path, const SessionOptions& options = vulkanOptions()) {
    auto session = Session::create(path, options);
    return session.isOk() ? Status::ok() : session.status();
  }

  // Rewrites the ctx model at `from` with `edit` into `to`.
  static void editCtx(const std::string& from, const std::string& to, const std::function<void(onnx::ModelProto&)>& edit) {
    onnx::ModelProto model = readModel(from);
    edit(model);
    writeBytes(to, model.SerializeAsString());
  }

  // Sets ep_cache_context of every main EPContext node.
  static std::function<void(onnx::ModelProto&)> setCacheContext(const std::string& value) {
    return [value](onnx::ModelProto& model) {
      for (auto* node : epContextNodes(model)) {
        if (auto* attr = findAttribute(*node, "ep_cache_context")) attr->set_s(value);
      }
    };
  }

  // Makes a file look old, so that "unchanged" cannot be a coincidence of timestamps.
  static void ageFile(const std::string& path) {
    fs::last_write_time(path, fs::file_time_type::clock::now() - std::chrono::hours(1));
  }

  // Files must be byte-for-byte and timestamp-for-timestamp what they were.
  struct Snapshot {
    std::map<std::string, std::pair<std::vector<std::byte>, fs::file_time_type>> files;
    static Snapshot of(const std::vector<std::string>& paths) {
      Snapshot s;
      for (const auto& p : paths) s.files[p] = {readBytes(p), modificationTime(p)};
      return s;
    }
    void expectUnchanged() const {
      for (const auto& [path, state] : files) {
        EXPECT_EQ(readBytes(path), state.first) << path << " changed";
        EXPECT_EQ(modificationTime(path), state.second) << path << " was rewritten";
      }
    }
  };

  TempDir dir_;
  fs::path root_;
};

}  // namespace kiln::testing
