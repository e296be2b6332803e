// Soak and fault-injection gtests (issue 18): many threads on two sessions of one ctx model, and a real write
// failure (the file-size limit, EFBIG) and a SIGKILL in the middle of an atomic write.
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "gtest_requirements.h"
#include "kiln/compiler.h"
#include "kiln/session.h"
#include "util/file_io.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

// A fresh folder under TMPDIR, removed with everything in it.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "kiln-soak-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data()) ? pattern : std::string();
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (fs::path(path_) / name).string(); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string readAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

// The names in `folder`, sorted: what a failed write must leave (the old targets, no temp file).
std::vector<std::string> fileNames(const std::string& folder) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(folder)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// 8 threads share 2 sessions of the tiny_cnn ctx model (4 threads per session) for 1,000 runs in all; every output
// must equal, bit for bit, the first run's. Runs of one session are serialized by the engine; the two sessions
// run concurrently on one device.
TEST(Soak, EightThreadsTwoSessionsThousandRunsAgree) {
  REQUIRE_VULKAN();
  const auto start = std::chrono::steady_clock::now();
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  ModelCompilationOptions compile(testing::vulkanOptions());
  compile.setInputModelPath(std::string(KILN_SOURCE_DIR) + "/resources/models/tiny_cnn.onnx");
  compile.setOutputModelPath(dir.file("tiny_cnn_ctx.onnx"));
  auto compiled = compileModel(compile);
  ASSERT_TRUE(compiled.isOk()) << compiled.status().toString();
  ASSERT_GT(compiled->epContextNodes, 0);

  std::vector<std::unique_ptr<Session>> sessions;
  for (int s = 0; s < 2; ++s) {
    auto session = Session::create(dir.file("tiny_cnn_ctx.onnx"), testing::vulkanOptions());
    ASSERT_TRUE(session.isOk()) << session.status().toString();
    sessions.push_back(std::move(*session));
  }
  const ValueMetadata& input = sessions[0]->inputs()[0];
  Shape shape;
  for (const auto& dim : input.shape) shape.push_back(dim.value > 0 ? dim.value : 1);
  Tensor x(DataType::FLOAT, shape);
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = std::sin(static_cast<float>(i) * 0.37f);
  auto reference = sessions[0]->run({{input.name, x}});
  ASSERT_TRUE(reference.isOk()) << reference.status().toString();
  ASSERT_FALSE(reference->empty());

  constexpr int kThreads = 8, kRuns = 1000;
  std::atomic<int> next{0}, failures{0}, mismatches{0};
  std::string firstError;
  std::atomic<bool> errorTaken{false};
  std::string firstMismatch;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Session& session = *sessions[t % 2];
      while (next.fetch_add(1) < kRuns) {
        auto out = session.run({{input.name, x}});
        if (!out.isOk()) {
          if (!errorTaken.exchange(true)) firstError = out.status().toString();
          ++failures;
          continue;
        }
        bool same = out->size() == reference->size();
        for (size_t o = 0; same && o < out->size(); ++o) {
          const Tensor& a = (*out)[o].tensor;
          const Tensor& b = (*reference)[o].tensor;
          same = a.shape() == b.shape() && a.byteSize() == b.byteSize() &&
                 std::memcmp(a.rawData(), b.rawData(), a.byteSize()) == 0;
        }
        if (!same && mismatches.fetch_add(1) == 0) {
          // Describe the first mismatch: which session, how many elements differ and by how much.
          const Tensor& a = (*out)[0].tensor;
          const Tensor& b = (*reference)[0].tensor;
          int64_t differing = 0;
          double largest = 0;
          for (int64_t i = 0; a.dtype() == DataType::FLOAT && i < std::min(a.numel(), b.numel()); ++i) {
            const double d = std::fabs(double(a.data<float>()[i]) - double(b.data<float>()[i]));
            if (a.data<float>()[i] != b.data<float>()[i]) ++differing;
            if (d > largest) largest = d;
          }
          firstMismatch = "session " + std::to_string(t % 2) + ": " + std::to_string(differing) + " of " +
                          std::to_string(b.numel()) + " elements differ, largest by " + std::to_string(largest);
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(failures.load(), 0) << firstError;
  EXPECT_EQ(mismatches.load(), 0) << firstMismatch;
  EXPECT_LT(seconds, 120.0) << "1,000 runs must finish within 2 minutes";
  std::printf("soak: %d runs on %d threads x 2 sessions in %.2f s\n", kRuns, kThreads, seconds);
}

// A write that really fails half way (the process's file-size limit: write() returns EFBIG, as it would return
// ENOSPC on a full disk) leaves the old file byte-identical, no temp file, and a status naming the error.
TEST(FileFaults, WriteFailingMidFileKeepsOldFileAndLeavesNoTemp) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string target = dir.file("model.onnx");
  {
    std::ofstream out(target, std::ios::binary);
    out << "the previous complete output";
  }
  struct sigaction ignore {}, previous {};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGXFSZ, &ignore, &previous), 0);
  rlimit old{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  rlimit limited = old;
  limited.rlim_cur = 64 * 1024;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limited), 0);
  const std::vector<std::byte> chunk(16 * 1024, std::byte{0x5a});
  int chunksWritten = 0;
  Status status = writeFileAtomically(target, [&](const ChunkWriter& write) {
    for (int i = 0; i < 16; ++i) {  // 256 KiB: fails at the fifth chunk
      KILN_RETURN_IF_ERROR(write(chunk));
      ++chunksWritten;
    }
    return Status::ok();
  });
  ::setrlimit(RLIMIT_FSIZE, &old);
  ::sigaction(SIGXFSZ, &previous, nullptr);
  EXPECT_FALSE(status.isOk());
  EXPECT_EQ(chunksWritten, 4) << "the failure must come mid-file";
  EXPECT_NE(status.message().find("File too large"), std::string::npos) << status.message();
  EXPECT_EQ(readAll(target), "the previous complete output");
  EXPECT_EQ(fileNames(dir.path()), std::vector<std::string>{"model.onnx"});
}

// A writer killed with SIGKILL in the middle of a file (no destructor, no cleanup runs) leaves the old file
// byte-identical and no temp file: the temp file is anonymous (O_TMPFILE) until commit.
TEST(FileFaults, WriterKilledMidFileLeavesNoTempFile) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string target = dir.file("m_vulkan.bin");
  {
    std::ofstream out(target, std::ios::binary);
    out << "old binary";
  }
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const std::vector<std::byte> chunk(4096, std::byte{7});
    (void)writeFileAtomically(target, [&](const ChunkWriter& write) {
      (void)write(chunk);
      ::raise(SIGKILL);
      return Status::ok();
    });
    ::_exit(0);
  }
  int wstatus = 0;
  ASSERT_EQ(::waitpid(child, &wstatus, 0), child);
  ASSERT_TRUE(WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL);
  EXPECT_EQ(readAll(target), "old binary");
  EXPECT_EQ(fileNames(dir.path()), std::vector<std::string>{"m_vulkan.bin"});
}

// A writer killed between naming its temp file and the rename leaves a whole ".<name>.tmp.<pid>.*" behind (POSIX
// cannot publish an anonymous file over an existing one; the soak test caught one in CI). The next write of that
// target removes the temps of writers that no longer run, and keeps a live writer's and other targets' temps.
TEST(FileFaults, NextWriteRemovesTempsOfKilledWriters) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  const pid_t dead = ::fork();
  ASSERT_GE(dead, 0);
  if (dead == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(dead, nullptr, 0), dead);
  const pid_t alive = ::fork();
  ASSERT_GE(alive, 0);
  if (alive == 0) {
    ::pause();
    ::_exit(0);
  }
  const std::string deadTemp = ".m_vulkan.bin.tmp." + std::to_string(dead) + ".0.42";
  const std::string liveTemp = ".m_vulkan.bin.tmp." + std::to_string(alive) + ".0.43";
  const std::string otherTarget = ".m_ctx.onnx.tmp." + std::to_string(dead) + ".1.44";
  for (const std::string& name : {deadTemp, liveTemp, otherTarget, std::string("m_vulkan.bin")}) {
    std::ofstream out(dir.file(name), std::ios::binary);
    out << "left by " << name;
  }
  const std::string text = "new binary";
  const Status status = writeFileAtomically(
      dir.file("m_vulkan.bin"), std::span(reinterpret_cast<const std::byte*>(text.data()), text.size()));
  ::kill(alive, SIGKILL);
  ::waitpid(alive, nullptr, 0);
  ASSERT_TRUE(status.isOk()) << status.message();
  EXPECT_EQ(readAll(dir.file("m_vulkan.bin")), "new binary");
  EXPECT_EQ(fileNames(dir.path()), (std::vector<std::string>{otherTarget, liveTemp, "m_vulkan.bin"}));
}

// A compile killed between renaming its binary over the old one and renaming its ctx model (CI's soak test hit it:
// the new binary beside the old ctx model) leaves its commit journal; the next load or write in that folder finishes
// the renames, so the pair is the new one, whole, with nothing else left.
void killBetweenRenames(const std::string& binary, const std::string& ctx) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    FileTransaction transaction;
    const std::string newBinary = "new binary", newCtx = "new ctx";
    (void)transaction.stage(binary, std::as_bytes(std::span(newBinary.data(), newBinary.size())));
    (void)transaction.stage(ctx, std::as_bytes(std::span(newCtx.data(), newCtx.size())));
    (void)transaction.commit([](const std::string&) { ::raise(SIGKILL); });
    ::_exit(0);
  }
  int wstatus = 0;
  ASSERT_EQ(::waitpid(child, &wstatus, 0), child);
  ASSERT_TRUE(WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL);
}

void writeOldPair(const ScratchDir& dir) {
  for (const char* name : {"m_ctx.onnx", "m_vulkan.bin"}) {
    std::ofstream out(dir.file(name), std::ios::binary);
    out << "old " << name;
  }
}

TEST(FileFaults, CommitKilledBetweenRenamesIsFinishedByTheNextReader) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  writeOldPair(dir);
  killBetweenRenames(dir.file("m_vulkan.bin"), dir.file("m_ctx.onnx"));
  ASSERT_EQ(readAll(dir.file("m_vulkan.bin")), "new binary");
  ASSERT_EQ(readAll(dir.file("m_ctx.onnx")), "old m_ctx.onnx") << "the kill must land between the renames";
  finishInterruptedCommits(dir.file("m_ctx.onnx"));
  EXPECT_EQ(readAll(dir.file("m_ctx.onnx")), "new ctx");
  EXPECT_EQ(readAll(dir.file("m_vulkan.bin")), "new binary");
  EXPECT_EQ(fileNames(dir.path()), (std::vector<std::string>{"m_ctx.onnx", "m_vulkan.bin"}));
}

TEST(FileFaults, CommitKilledBetweenRenamesIsFinishedByTheNextWriteInItsFolder) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  writeOldPair(dir);
  killBetweenRenames(dir.file("m_vulkan.bin"), dir.file("m_ctx.onnx"));
  const std::string text = "unrelated";
  ASSERT_TRUE(writeFileAtomically(dir.file("other.txt"), std::as_bytes(std::span(text.data(), text.size()))).isOk());
  EXPECT_EQ(readAll(dir.file("m_ctx.onnx")), "new ctx");
  EXPECT_EQ(readAll(dir.file("m_vulkan.bin")), "new binary");
  EXPECT_EQ(fileNames(dir.path()), (std::vector<std::string>{"m_ctx.onnx", "m_vulkan.bin", "other.txt"}));
}

// A live writer's journal is its own business: nothing touches it or its files.
TEST(FileFaults, LiveWritersJournalIsLeftAlone) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  writeOldPair(dir);
  const std::string journal = ".m_ctx.onnx.commit." + std::to_string(::getpid()) + ".0.1";
  const std::string temp = ".m_ctx.onnx.tmp." + std::to_string(::getpid()) + ".0.2";
  {
    std::ofstream(dir.file(journal)) << "kiln-commit 1\n" << temp << "\tm_ctx.onnx\n";
    std::ofstream(dir.file(temp)) << "new ctx";
  }
  finishInterruptedCommits(dir.file("m_ctx.onnx"));
  EXPECT_EQ(readAll(dir.file("m_ctx.onnx")), "old m_ctx.onnx");
  EXPECT_EQ(fileNames(dir.path()).size(), 4u);
}

// The same fault inside a multi-file transaction (the compile's ctx model + binary): the first file staged fine,
// the second fails mid-file; neither target changes and no temp file stays.
TEST(FileFaults, TransactionWithFailingSecondFileChangesNothing) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  for (const char* name : {"a_ctx.onnx", "a_vulkan.bin"}) {
    std::ofstream out(dir.file(name), std::ios::binary);
    out << "old " << name;
  }
  struct sigaction ignore {}, previous {};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGXFSZ, &ignore, &previous), 0);
  rlimit old{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  rlimit limited = old;
  limited.rlim_cur = 64 * 1024;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limited), 0);
  const std::vector<std::byte> small(1024, std::byte{1}), big(200 * 1024, std::byte{2});
  Status status;
  {
    FileTransaction transaction;
    status = transaction.stage(dir.file("a_ctx.onnx"), small);
    if (status.isOk()) status = transaction.stage(dir.file("a_vulkan.bin"), big);
    if (status.isOk()) status = transaction.commit();
  }
  ::setrlimit(RLIMIT_FSIZE, &old);
  ::sigaction(SIGXFSZ, &previous, nullptr);
  EXPECT_FALSE(status.isOk());
  EXPECT_EQ(readAll(dir.file("a_ctx.onnx")), "old a_ctx.onnx");
  EXPECT_EQ(readAll(dir.file("a_vulkan.bin")), "old a_vulkan.bin");
  EXPECT_EQ(fileNames(dir.path()), (std::vector<std::string>{"a_ctx.onnx", "a_vulkan.bin"}));
}

}  // namespace
}  // namespace kiln
