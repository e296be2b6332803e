// Content addresses of package files: "sha256:<hex>", as onnxruntime's model packages name shared assets. SHA-256
// (OpenSSL's libcrypto) rather than the context binary's XXH3, because a package crosses machines and the digest
// must also catch deliberate tampering, which a non-cryptographic hash cannot.
#pragma once

#include <cstdint>
#include <string>

#include "kiln/status.h"

namespace kiln::package {

struct FileDigest {
  std::string digest;  // "sha256:" + 64 lower-case hex digits
  uint64_t size = 0;
};

// The digest of the regular file at `path`, read in chunks. NO_SUCHFILE when it is missing; INVALID_ARGUMENT when
// it is not a regular file.
Result<FileDigest> digestFile(const std::string& path);

// The digest of `text` (tests, and manifests that hash small strings).
std::string digestText(const std::string& text);

}  // namespace kiln::package
