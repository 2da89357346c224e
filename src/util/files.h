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
// A file a user names on the command line (--export, --port-file): a regular file, or one that does not
// exist yet, is written as write_file writes (a new file replaces it); a device, a pipe or a socket (also
// through a link: /dev/stdout) is written in place and stays what it is; a link to a regular file or a
// folder is refused, so that nothing is written through a link into another file. Throws std::runtime_error
// naming the file.
void write_output_file(const std::filesystem::path& path, const std::string& content);

// An exclusive lock on a file, between processes (flock), held while the object lives and released by the
// kernel however the process ends. The constructor waits for it; a file that cannot be opened (a read-only
// folder) gives no lock: held() is false, and the caller goes on unlocked.
class FileLock {
 public:
  explicit FileLock(const std::filesystem::path& path);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  bool held() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

}  // namespace ptxbench
