// Writes tests/report/fixture_store.h's store: make_fixture_store DATA_FOLDER [ablation] (the store is
// DATA/ptxbench.db; "ablation": write_ablation_store's, the knowledge levels and the tracks).
#include <cstdio>
#include <filesystem>
#include <string>

#include "fixture_store.h"

int main(int argc, char** argv) {
  const bool ablation = argc == 3 && std::string(argv[2]) == "ablation";
  if (argc != 2 && !ablation) {
    std::fprintf(stderr, "usage: %s DATA_FOLDER [ablation]\n", argv[0]);
    return 2;
  }
  const std::filesystem::path data = argv[1];
  std::filesystem::create_directories(data);
  std::filesystem::remove(data / "ptxbench.db");
  if (ablation)
    ptxbench::report_fixture::write_ablation_store(data / "ptxbench.db");
  else
    ptxbench::report_fixture::write_fixture_store(data / "ptxbench.db");
  return 0;
}
