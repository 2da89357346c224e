// HMAC-SHA256 for the runner's result channel (protocol.h, "Result channel"), from OpenSSL's libcrypto, which
// the runner and the parent both link (it is on every Linux a GPU host runs). tests/unit/test_sandbox.cpp
// checks it against RFC 4231's known answers.
#pragma once

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ptxbench::mac {

inline std::string to_hex(const uint8_t* bytes, size_t size) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < size; ++i) out += digits[bytes[i] >> 4], out += digits[bytes[i] & 15];
  return out;
}

// HMAC-SHA256(key, message) as 64 lowercase hex digits.
inline std::string hmac_sha256_hex(std::string_view key, std::string_view message) {
  uint8_t tag[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (!HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
            reinterpret_cast<const uint8_t*>(message.data()), message.size(), tag, &length))
    throw std::runtime_error("HMAC-SHA256 failed");
  return to_hex(tag, length);
}

// The line that follows the result document on the channel: "ptxbench-mac <64 hex>\n", or
// "ptxbench-mac none <why>\n" when the runner could not read its key.
inline constexpr std::string_view kTagPrefix = "ptxbench-mac ";

}  // namespace ptxbench::mac
