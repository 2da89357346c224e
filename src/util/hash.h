// Content hashes (SHA-256, hex) for submissions and the compile cache.
#pragma once

#include <string>
#include <string_view>

namespace ptxbench {

std::string sha256_hex(std::string_view data);

}  // namespace ptxbench
