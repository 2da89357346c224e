#include "util/hash.h"

#include <openssl/evp.h>

#include <fmt/format.h>
#include <stdexcept>

namespace ptxbench {

std::string sha256_hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (!EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha256(), nullptr))
    throw std::runtime_error("SHA-256 failed");
  std::string hex;
  for (unsigned i = 0; i < length; ++i) hex += fmt::format("{:02x}", digest[i]);
  return hex;
}

}  // namespace ptxbench
