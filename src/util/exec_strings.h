// What execve takes, made before a fork or spawn: the environment with some variables set, and the
// NULL-terminated pointer arrays. Header-only: the judge and the runner (which links none of the judge's
// libraries) both start processes with it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

namespace ptxbench {

// This process's environment as "NAME=value" strings, with each (name, value) of `set` added or replacing.
template <typename Pairs>
std::vector<std::string> environment_with(const Pairs& set) {
  std::vector<std::string> environment;
  for (char** variable = environ; *variable != nullptr; ++variable) {
    const std::string_view entry(*variable);
    const std::string_view name = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const auto& [set_name, value] : set) replaced = replaced || set_name == name;
    if (!replaced) environment.emplace_back(entry);
  }
  for (const auto& [name, value] : set) environment.push_back(std::string(name) + "=" + value);
  return environment;
}

// The pointers execve takes: one per string, then NULL. `strings` must outlive them.
inline std::vector<char*> exec_pointers(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

}  // namespace ptxbench
