// The documents ptxbench gives other programs (util/documents.h) and their schema files (schemas/): one file
// per kind, fixing that kind and its version. What the commands print is held to those files by tests/json.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>

#include "util/documents.h"
#include "util/json_file.h"

using namespace ptxbench;
namespace fs = std::filesystem;

TEST(Documents, EveryKindHasItsSchemaFileWithItsVersion) {
  const fs::path schemas = fs::path(PTXBENCH_SOURCE_DIR) / "schemas";
  std::set<std::string> kinds;
  for (const DocumentFormat& format : documents::all) {
    const std::string kind(format.kind);
    EXPECT_TRUE(kinds.insert(kind).second) << kind << " is listed twice";
    const fs::path file = schemas / (kind + ".schema.json");
    ASSERT_TRUE(fs::exists(file)) << file;
    const nlohmann::json schema = read_json_file(file);
    EXPECT_EQ(schema["properties"]["kind"]["const"], kind) << file;
    EXPECT_EQ(schema["properties"]["schema"]["const"], format.version) << file;
  }
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(schemas)) {
    ++files;
    const std::string name = entry.path().filename().string();
    const std::string kind = name.substr(0, name.find(".schema.json"));
    EXPECT_TRUE(kinds.contains(kind)) << name << " describes no document that util/documents.h lists";
  }
  EXPECT_EQ(files, kinds.size());
}

TEST(Documents, ATaggedDocumentNamesItsKindAndVersion) {
  const nlohmann::json doc = tagged(documents::cache, {{"entries", 3}});
  EXPECT_EQ(doc["kind"], "cache");
  EXPECT_EQ(doc["schema"], documents::cache.version);
  EXPECT_EQ(doc["entries"], 3);
  const nlohmann::ordered_json ordered = tagged_ordered(documents::report, {{"runs", {1}}, {"a", 2}});
  EXPECT_EQ(ordered.begin().key(), "kind");
  EXPECT_EQ(ordered.dump(), R"({"kind":"report","schema":1,"runs":[1],"a":2})");
}

TEST(Documents, WhatIsNotThereIsNull) {
  EXPECT_TRUE(or_null(int64_t{0}).is_null());
  EXPECT_EQ(or_null(int64_t{7}), 7);
  EXPECT_TRUE(or_null(0).is_null());
  EXPECT_TRUE(or_null(std::string()).is_null());
  EXPECT_EQ(or_null(std::string("2026-12-05T00:00:00Z")), "2026-12-05T00:00:00Z");
}
