// Small file helpers with errors that name the file.
#pragma once

#include <filesystem>
#include <string>

namespace ptxbench {

std::string read_file(const std::filesystem::path& path);  // throws std::runtime_error naming the file
// A file a user names, read with care: a regular file (not a folder, a device such as /dev/zero, a pipe) of
// at most `max_bytes`. Throws std::runtime_error naming the file and what is wrong with it.
std::string read_regular_file(const std::filesystem::path& path, size_t max_bytes);
void write_file(const std::filesystem::path& path, const std::string& content);  // atomic: temp file + rename

}  // namespace ptxbench
