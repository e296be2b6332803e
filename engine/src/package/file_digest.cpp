#include "package/file_digest.h"

#include <openssl/evp.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>

#include "util/file_io.h"

namespace kiln::package {
namespace {

using DigestContext = std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)>;

DigestContext newContext() {
  DigestContext context(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  if (context && EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr) != 1) context.reset();
  return context;
}

std::string finish(EVP_MD_CTX* context) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  EVP_DigestFinal_ex(context, digest.data(), &length);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string text = "sha256:";
  for (unsigned int i = 0; i < length; ++i) {
    text += kHex[digest[i] >> 4];
    text += kHex[digest[i] & 15];
  }
  return text;
}

}  // namespace

Result<FileDigest> digestFile(const std::string& path) {
  KILN_RETURN_IF_ERROR(checkRegularFile(path));
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(StatusCode::NO_SUCHFILE, "cannot open '" + path + "': " + std::strerror(errno));
  DigestContext context = newContext();
  if (!context) return Status(StatusCode::FAIL, "SHA-256 is not available from libcrypto");
  FileDigest result;
  std::vector<char> chunk(1 << 20);
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const auto got = static_cast<size_t>(in.gcount());
    if (got == 0) break;
    EVP_DigestUpdate(context.get(), chunk.data(), got);
    result.size += got;
  }
  if (in.bad()) return Status(StatusCode::FAIL, "reading '" + path + "' failed");
  result.digest = finish(context.get());
  return result;
}

std::string digestText(const std::string& text) {
  DigestContext context = newContext();
  if (!context) return "";
  EVP_DigestUpdate(context.get(), text.data(), text.size());
  return finish(context.get());
}

}  // namespace kiln::package
