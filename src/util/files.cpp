#include "util/files.h"

#include <algorithm>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace ptxbench {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path.string() + ": cannot read: " + std::strerror(errno));
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

namespace {

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISFIFO(mode)) return "a pipe";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& what) {
  throw std::runtime_error(path.string() + ": " + what);
}

}  // namespace

std::string read_regular_file(const std::filesystem::path& path, size_t max_bytes) {
  // O_NONBLOCK: opening a pipe must not wait for a writer; it is refused below anyway.
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) fail(path, std::string("cannot read: ") + std::strerror(errno));
  const struct Closed {
    int fd;
    ~Closed() { close(fd); }
  } closed{fd};
  struct stat info {};
  if (fstat(fd, &info) != 0) fail(path, std::string("cannot read: ") + std::strerror(errno));
  if (!S_ISREG(info.st_mode)) fail(path, kind_of(info.st_mode) + ", not a file");
  const auto too_big = [&] { fail(path, fmt::format("over the size limit of {} bytes", max_bytes)); };
  if (static_cast<uintmax_t>(info.st_size) > max_bytes) too_big();
  // The size is checked again while reading: the file may grow meanwhile. The buffer grows with what is read
  // (sized once for the size stat gave), never to the limit: a task file of 2 kB is not a 64 MiB allocation.
  std::string content;
  size_t size = 0;
  const size_t limit = max_bytes + 1;  // one byte more than allowed: how a file that grew is seen
  content.resize(std::min<size_t>(static_cast<size_t>(info.st_size) + 1, limit));
  for (;;) {
    if (size == content.size()) {
      if (content.size() == limit) break;
      content.resize(std::min(limit, std::max<size_t>(2 * content.size(), 4096)));
    }
    const ssize_t n = read(fd, content.data() + size, content.size() - size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(path, std::string("cannot read: ") + std::strerror(errno));
    if (n == 0) break;
    size += static_cast<size_t>(n);
  }
  if (size > max_bytes) too_big();
  content.resize(size);
  return content;
}

void write_file(const std::filesystem::path& path, const std::string& content) {
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  auto temp = path;
  temp += ".tmp" + std::to_string(getpid());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << content;
    if (!out.flush()) throw std::runtime_error(temp.string() + ": cannot write: " + std::strerror(errno));
  }
  std::filesystem::rename(temp, path);
}

void write_output_file(const std::filesystem::path& path, const std::string& content) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status link = fs::symlink_status(path, ec);
  if (ec || !fs::exists(link)) return write_file(path, content);
  const fs::file_status target = fs::status(path, ec);
  if (fs::is_regular_file(link)) return write_file(path, content);
  if (fs::is_directory(target)) fail(path, "is a folder, not a file");
  if (fs::is_symlink(link) && (ec || !fs::exists(target) || fs::is_regular_file(target)))
    fail(path, "is a symbolic link to a file: not followed (name the file itself)");
  // A device, a pipe or a socket: written in place, never replaced.
  const int fd = open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) fail(path, std::string("cannot open for writing: ") + std::strerror(errno));
  for (size_t written = 0; written < content.size();) {
    const ssize_t n = write(fd, content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = errno;
      close(fd);
      fail(path, std::string("cannot write: ") + std::strerror(error));
    }
    written += static_cast<size_t>(n);
  }
  if (close(fd) != 0) fail(path, std::string("cannot write: ") + std::strerror(errno));
}

FileLock::FileLock(const std::filesystem::path& path)
    : fd_(open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644)) {
  if (fd_ < 0) return;
  while (flock(fd_, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    close(fd_);
    fd_ = -1;
    return;
  }
}

FileLock::~FileLock() {
  if (fd_ >= 0) close(fd_);  // closing the only descriptor releases the lock
}

}  // namespace ptxbench
