// Small file helpers with errors that name the file.
#pragma once

#include <filesystem>
#include <string>

namespace ptxbench {

std::string read_file(const std::filesystem::path& path);  // throws std::runtime_error naming the file
void write_file(const std::filesystem::path& path, const std::string& content);  // atomic: temp file + rename

}  // namespace ptxbench
