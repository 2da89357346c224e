// Writes tests/report/fixture_store.h's store: make_fixture_store DATA_FOLDER (the store is DATA/ptxbench.db).
#include <cstdio>
#include <filesystem>

#include "fixture_store.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DATA_FOLDER\n", argv[0]);
    return 2;
  }
  const std::filesystem::path data = argv[1];
  std::filesystem::create_directories(data);
  std::filesystem::remove(data / "ptxbench.db");
  ptxbench::report_fixture::write_fixture_store(data / "ptxbench.db");
  return 0;
}
