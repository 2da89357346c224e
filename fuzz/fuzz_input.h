// What the harnesses share: the input as a file for the readers that take a path, and the errors a reader
// may answer bad input with. Any other exception escapes the harness: libFuzzer reports it as a crash, since
// bad input must get a clear error (a ConfigError or an invalid_argument naming what is wrong), never
// another.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "util/errors.h"

namespace ptxbench::fuzz {

inline std::string text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// A folder of this process's own, made once, for the readers that read files.
inline const std::filesystem::path& folder() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("ptxbench-fuzz-" + std::to_string(getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

inline std::filesystem::path as_file(const std::string& name, const uint8_t* data, size_t size) {
  const std::filesystem::path path = folder() / name;
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return path;
}

// Runs `read`, letting only the documented errors of bad input through.
template <typename Read>
void expect_clear_errors(Read read) {
  try {
    read();
  } catch (const ConfigError&) {
  } catch (const std::invalid_argument&) {
  }
}

}  // namespace ptxbench::fuzz
