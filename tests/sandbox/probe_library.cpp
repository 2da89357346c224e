// A "solution" library for the CPU sandbox tests (tests/unit/test_sandbox.cpp): its static constructor, which
// runs while the loader dlopens it, tries what a cheating solution would try at load time, and records one
// line per attempt: "<what>: blocked (<why>)" or "<what>: ESCAPED (<evidence>)". Arguments come from the
// loader's command line (/proc/self/cmdline): library, port of a listener outside the sandbox, a secret file
// in the hidden data folder, a folder outside the sandbox to plant a file in.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::string report;

void note(const std::string& what, bool escaped, const std::string& detail) {
  report += what + (escaped ? ": ESCAPED (" : ": blocked (") + detail + ")\n";
}

std::vector<std::string> arguments() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> args;
  for (std::string arg; std::getline(in, arg, '\0');) args.push_back(arg);
  return args;
}

std::string slurp(const std::string& path, int* error) {
  std::ifstream in(path, std::ios::binary);
  *error = errno;
  if (!in) return "";
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void try_connect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return note("socket", false, std::strerror(errno));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const int rc = connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  note("connect 127.0.0.1:" + std::to_string(port), rc == 0, rc == 0 ? "connected" : std::strerror(errno));
  close(fd);
}

void try_dns() {
  addrinfo* found = nullptr;
  const int rc = getaddrinfo("example.com", "80", nullptr, &found);
  note("dns example.com", rc == 0, rc == 0 ? "resolved" : gai_strerror(rc));
  if (found) freeaddrinfo(found);
}

void try_keys(const std::string& secret_file) {
  const char* key = std::getenv("OPENAI_API_KEY");
  note("env OPENAI_API_KEY", key != nullptr, key ? key : "unset");
  int error = 0;
  for (const char* path : {"/proc/1/environ", "/proc/self/environ"}) {
    const std::string environ_text = slurp(path, &error);
    const bool leaked = environ_text.find("OPENAI_API_KEY") != std::string::npos;
    note(std::string(path), leaked, leaked ? "holds OPENAI_API_KEY" : "no key there");
  }
  const std::string secret = slurp(secret_file, &error);
  note("read " + secret_file, !secret.empty(), secret.empty() ? std::strerror(error) : secret);
}

void try_write(const std::string& outside_dir) {
  for (const std::string& path : {outside_dir + "/planted", std::string("/var/tmp/ptxbench-planted"),
                                  std::string("/etc/ptxbench-planted")}) {
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    note("create " + path, fd >= 0, fd >= 0 ? "created" : std::strerror(errno));
    if (fd >= 0) close(fd);
  }
  // The working directory (the sandbox's scratch folder) is writable: the one place that is.
  const int fd = open("scratch-file", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  report += std::string("scratch write: ") + (fd >= 0 ? "allowed" : std::strerror(errno)) + "\n";
  if (fd >= 0) close(fd);
}

struct AtLoad {
  AtLoad() {
    const std::vector<std::string> args = arguments();
    if (args.size() < 5) {
      report = "probe: expected <loader> <library> <port> <secret file> <outside dir>\n";
      return;
    }
    try_connect(std::atoi(args[2].c_str()));
    try_dns();
    try_keys(args[3]);
    try_write(args[4]);
  }
} at_load;

}  // namespace

extern "C" const char* probe_report() {
  return report.c_str();
}
