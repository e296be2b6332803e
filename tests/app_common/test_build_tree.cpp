// kiln-build-tree.conf (app/common/build_tree.h): a missing, empty or malformed file is no setting (the lookup falls
// back to share/kiln), never a crash; only an exact `key=` line counts.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "build_tree.h"

namespace kiln::app {
namespace {

namespace fs = std::filesystem;

class BuildTreeConf : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kiln-build-tree-test-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const std::string& text) { std::ofstream(dir_ / "kiln-build-tree.conf") << text; }
  std::string exe() const { return (dir_ / "kiln").string(); }
  fs::path dir_;
};

TEST_F(BuildTreeConf, MissingFileIsNoSetting) { EXPECT_EQ(buildTreeSetting(exe(), "data_dir"), ""); }

TEST_F(BuildTreeConf, ReadsExactKeysOnly) {
  write("# comment\ndata_dir_x=/wrong\ndata=/wrong\nno equals sign\n=/empty key\ndata_dir=/src/resources\n");
  EXPECT_EQ(buildTreeSetting(exe(), "data_dir"), "/src/resources");
  EXPECT_EQ(buildTreeSetting(exe(), "kiln_cli"), "");
}

TEST_F(BuildTreeConf, BinaryGarbageIsNoSetting) {
  write(std::string("\0\xff\xfe=\n\x01kiln_cli", 14));
  EXPECT_EQ(buildTreeSetting(exe(), "kiln_cli"), "");
}

TEST_F(BuildTreeConf, DataDirectoryFallsBackToShareKiln) {
  ::unsetenv("KILN_DATA_DIR");
  EXPECT_EQ(dataDirectory(exe()), (dir_.parent_path() / "share" / "kiln").string());
  write("data_dir=/src/resources\n");
  EXPECT_EQ(dataDirectory(exe()), "/src/resources");
}

}  // namespace
}  // namespace kiln::app
