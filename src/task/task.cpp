#include "task/task.h"

#include <fnmatch.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <ranges>
#include <set>

#include "arch/profile.h"
#include "track/track.h"
#include "util/json_file.h"
#include "util/text.h"

namespace ptxbench {

using nlohmann::json;

TaskFileError::TaskFileError(const std::filesystem::path& file_path, const std::string& field_name,
                             const std::string& problem)
    : ConfigError(fmt::format("{}: field '{}': {}", file_path.string(), field_name, problem)),
      file(file_path),
      field(field_name) {}

std::string Shape::to_string() const {
  std::string out;
  for (const auto& name : order) out += fmt::format("{}{}={}", out.empty() ? "" : " ", name, dims.at(name));
  for (const auto& [name, value] : dims)
    if (std::find(order.begin(), order.end(), name) == order.end())
      out += fmt::format("{}{}={}", out.empty() ? "" : " ", name, value);
  return out;
}

std::string to_string(TaskMode mode) {
  return mode == TaskMode::full ? "full" : "static";
}

const Family& Task::family_spec() const {
  const Family* spec = find_family(family);
  if (spec == nullptr) throw std::logic_error("task " + id + ": no family " + family);
  return *spec;
}

int64_t Task::flops(const Shape& shape) const {
  return evaluate_expression(family_spec().flops, values_of(family_spec(), shape.dims, parameters));
}

const Tolerance& Task::tolerance_for(const std::string& output) const {
  const auto it = tolerances.find(output);
  return it == tolerances.end() ? tolerance : it->second;
}

std::vector<Shape> Task::all_shapes() const {
  std::vector<Shape> shapes{main_shape};
  shapes.insert(shapes.end(), check_shapes.begin(), check_shapes.end());
  return shapes;
}

// ---------------------------------------------------------------------------------------------------------
// Loading. Every field is checked; unknown fields are errors too, so that a misspelt optional field is not
// silently ignored.

namespace {

class TaskReader {
 public:
  explicit TaskReader(std::filesystem::path file) : file_(std::move(file)) {}

  Task read() {
    json doc;
    try {
      doc = read_json_file(file_);
    } catch (const JsonFileError& e) {
      throw TaskFileError(e.file, e.where, e.problem);
    }
    if (!doc.is_object()) fail("(document)", "must be a JSON object");
    // ("flops" is known only to be refused with the reason below.)
    only_known(doc, "",
               {"id", "title", "family", "arch", "dtype", "mode", "description", "shapes", "required",
                "coverage_threshold", "tolerance", "tolerances", "parameters", "baseline", "tracks", "groups",
                "flops"});

    Task task;
    task.file = file_;
    task.id = string_field(doc, "id");
    if (task.id != file_.stem().string())
      fail("id",
           fmt::format("'{}' must equal the file name without .json ('{}')", task.id, file_.stem().string()));
    if (!plain_name(task.id, /*dots=*/true))
      fail("id", fmt::format("'{}' must be lowercase letters, digits, '-', '.' and '_'", task.id));
    task.title = string_field(doc, "title");
    task.family = string_field(doc, "family");
    const Family* family = find_family(task.family);
    if (!family)
      fail("family", fmt::format("unknown family '{}' (known: {})", task.family,
                                 fmt::join(all_families() | std::views::transform(&Family::name), ", ")));
    if (doc.contains("flops"))
      fail("flops", fmt::format("FLOPs are the family's ({}), not a task file's", family->flops));
    task.arch = string_field(doc, "arch");
    if (!find_arch(task.arch))
      fail("arch", fmt::format("unknown architecture '{}' (known: {})", task.arch,
                               fmt::join(all_archs() | std::views::transform(&ArchProfile::name), ", ")));
    task.dtype = string_field(doc, "dtype");
    if (task.dtype != "bf16") fail("dtype", fmt::format("'{}' is not supported (known: bf16)", task.dtype));
    std::string mode = string_field(doc, "mode");
    if (mode == "full")
      task.mode = TaskMode::full;
    else if (mode == "static")
      task.mode = TaskMode::static_only;
    else
      fail("mode", fmt::format("'{}' must be \"full\" or \"static\"", mode));
    const ArchProfile& profile = *find_arch(task.arch);
    if (task.mode == TaskMode::full && !profile.runs)
      fail("mode", fmt::format("\"full\", but no {} GPU runs the GPU stages here (arch/{}.json): \"static\"",
                               profile.marketing, profile.name));
    task.description = string_field(doc, "description");
    task.baseline = string_field(doc, "baseline");
    if (!family->baseline(task.baseline))
      fail("baseline",
           fmt::format("'{}' is not a baseline of family '{}' (known: {})", task.baseline, family->name,
                       fmt::join(family->baselines | std::views::transform(&BaselineSpec::name), ", ")));
    if (task.baseline != kNoBaseline && std::find(profile.baselines.begin(), profile.baselines.end(),
                                                  task.baseline) == profile.baselines.end())
      fail("baseline", fmt::format("'{}' is no baseline of {} (its profile's: {})", task.baseline, task.arch,
                                   fmt::join(profile.baselines, ", ")));

    task.parameters = read_parameters(doc, *family);
    task.tracks = read_tracks(doc);
    task.groups = read_groups(doc);

    const json& shapes = object_field(doc, "shapes");
    only_known(shapes, "shapes.", {"main", "check"});
    task.main_shape = read_shape(object_field(shapes, "main", "shapes."), "shapes.main", *family);
    task.main_shape.label = "main";
    const json& checks = array_field(shapes, "check", "shapes.");
    for (size_t i = 0; i < checks.size(); ++i) {
      std::string where = fmt::format("shapes.check[{}]", i);
      if (!checks[i].is_object()) fail(where, "must be an object");
      Shape shape = read_shape(checks[i], where, *family);
      if (!checks[i].contains("label")) fail(where + ".label", "is missing (say why this shape is checked)");
      task.check_shapes.push_back(std::move(shape));
    }
    check_shape_rules(task.main_shape, "shapes.main", *family, task.parameters);
    for (size_t i = 0; i < task.check_shapes.size(); ++i)
      check_shape_rules(task.check_shapes[i], fmt::format("shapes.check[{}]", i), *family, task.parameters);

    task.tolerance = read_tolerance(object_field(doc, "tolerance"), "tolerance");
    // Per-output overrides: the outputs of one family can differ in type and scale (attention's bf16 O and
    // fp32 LSE), so one pair of numbers cannot suit them all.
    if (doc.contains("tolerances")) {
      const json& tolerances = object_field(doc, "tolerances");
      if (tolerances.empty()) fail("tolerances", "must name at least one output (or leave the field out)");
      for (const auto& [output, value] : tolerances.items()) {
        const std::string where = "tolerances." + output;
        const TensorSpec* tensor = family->tensor(output);
        if (tensor == nullptr || tensor->role != Role::output)
          fail(where,
               fmt::format("not an output of family '{}' (outputs: {})", family->name,
                           fmt::join(family->with_role(Role::output) |
                                         std::views::transform([](const TensorSpec* t) { return t->name; }),
                                     ", ")));
        if (!value.is_object()) fail(where, "must be an object");
        task.tolerances[output] = read_tolerance(value, where);
      }
    }

    const json& required = array_field(doc, "required");
    if (required.empty()) fail("required", "must name at least one instruction family");
    int math_families = 0;
    std::set<std::string> names;
    for (size_t i = 0; i < required.size(); ++i) {
      RequiredFamily f = read_family(required[i], fmt::format("required[{}]", i));
      for (const auto& [field, listed, known] : {std::tuple{"ptx", &f.ptx, &profile.ptx_mnemonics},
                                                 std::tuple{"sass", &f.sass, &profile.sass_opcodes}})
        for (const std::string& name : *listed)
          if (!known_instruction(*known, name))
            fail(fmt::format("required[{}].{}", i, field),
                 fmt::format("'{}' is no {} instruction of {} (known: {})", name, field, task.arch,
                             fmt::join(*known, ", ")));
      if (!names.insert(f.name).second)
        fail(fmt::format("required[{}].name", i), "'" + f.name + "' appears twice");
      math_families += f.does_the_math;
      task.required.push_back(std::move(f));
    }
    // The family whose instructions do the task's FLOPs (an MMA), held to a share of them; a memory-bound
    // task (a decode) may have none, and is held to its copies and barriers only.
    if (math_families > 1)
      fail("required", "at most one family may have \"does_the_math\": true (the MMA instruction)");
    if (math_families == 1) {
      task.coverage_threshold = number_field(doc, "coverage_threshold");
      if (task.coverage_threshold <= 0 || task.coverage_threshold > 1)
        fail("coverage_threshold", "must be in (0, 1]");
    } else if (doc.contains("coverage_threshold")) {
      fail("coverage_threshold", "applies to a \"does_the_math\" family, and no required family has it");
    }
    return task;
  }

 private:
  [[noreturn]] void fail(const std::string& field, const std::string& problem) const {
    throw TaskFileError(file_, field, problem);
  }

  void only_known(const json& object, const std::string& prefix,
                  std::initializer_list<const char*> known) const {
    for (const auto& [key, value] : object.items())
      if (std::none_of(known.begin(), known.end(), [&](const char* k) { return key == k; }))
        fail(prefix + key, "unknown field (misspelt?)");
  }

  const json& field(const json& object, const std::string& name, const std::string& prefix) const {
    auto it = object.find(name);
    if (it == object.end()) fail(prefix + name, "is missing");
    return *it;
  }
  std::string string_field(const json& object, const std::string& name,
                           const std::string& prefix = "") const {
    const json& value = field(object, name, prefix);
    if (!value.is_string() || value.get<std::string>().empty())
      fail(prefix + name, "must be a non-empty string");
    return value.get<std::string>();
  }
  double number_field(const json& object, const std::string& name, const std::string& prefix = "") const {
    const json& value = field(object, name, prefix);
    if (!value.is_number()) fail(prefix + name, "must be a number");
    return value.get<double>();
  }
  const json& object_field(const json& object, const std::string& name,
                           const std::string& prefix = "") const {
    const json& value = field(object, name, prefix);
    if (!value.is_object()) fail(prefix + name, "must be an object");
    return value;
  }
  const json& array_field(const json& object, const std::string& name, const std::string& prefix = "") const {
    const json& value = field(object, name, prefix);
    if (!value.is_array()) fail(prefix + name, "must be an array");
    return value;
  }
  std::vector<std::string> string_list(const json& object, const std::string& name,
                                       const std::string& where) const {
    const json& list = array_field(object, name, where + ".");
    std::vector<std::string> out;
    for (const json& item : list) {
      if (!item.is_string() || item.get<std::string>().empty())
        fail(where + "." + name, "must be a list of non-empty strings");
      out.push_back(item.get<std::string>());
    }
    if (out.empty()) fail(where + "." + name, "must not be empty");
    return out;
  }

  Shape read_shape(const json& object, const std::string& where, const Family& family) const {
    Shape shape;
    shape.order = family.dims;
    for (const auto& [key, value] : object.items()) {
      if (key == "label") {
        if (!value.is_string() || value.get<std::string>().empty())
          fail(where + ".label", "must be a non-empty string");
        shape.label = value.get<std::string>();
        continue;
      }
      if (std::find(family.dims.begin(), family.dims.end(), key) == family.dims.end())
        fail(where + "." + key, fmt::format("not a dimension of family '{}'", family.name));
      shape.dims[key] = dimension(value, where + "." + key);
    }
    for (const auto& dim : family.dims)
      if (!shape.dims.contains(dim)) fail(where + "." + dim, "is missing");
    return shape;
  }

  // The ABI passes every dimension as an int.
  int64_t dimension(const json& value, const std::string& where) const {
    constexpr int64_t kMax = std::numeric_limits<int>::max();
    if (!value.is_number_integer() || (value.is_number_unsigned() && value.get<uint64_t>() > kMax) ||
        value.get<int64_t>() <= 0 || value.get<int64_t>() > kMax)
      fail(where,
           fmt::format("must be a positive integer of at most {} (the entry point takes an int)", kMax));
    return value.get<int64_t>();
  }

  // The family's rules, the sizes of the tensors the shape makes, and FLOPs that are positive.
  void check_shape_rules(const Shape& shape, const std::string& where, const Family& family,
                         const std::map<std::string, bool>& parameters) const {
    try {
      const Values values = values_of(family, shape.dims, parameters);
      if (std::string problem = check_shape(family, values); !problem.empty()) fail(where, problem);
      if (evaluate_expression(family.flops, values) <= 0)
        fail(where, fmt::format("the family's FLOPs ({}) are not positive", family.flops));
    } catch (const std::invalid_argument& e) {
      fail(where, e.what());
    }
  }

  Tolerance read_tolerance(const json& object, const std::string& where) const {
    only_known(object, where + ".", {"rtol", "atol"});
    Tolerance tolerance;
    tolerance.rtol = number_field(object, "rtol", where + ".");
    tolerance.atol = number_field(object, "atol", where + ".");
    if (tolerance.rtol < 0 || tolerance.atol < 0 || tolerance.rtol + tolerance.atol <= 0)
      fail(where, "rtol and atol must be non-negative and not both zero");
    return tolerance;
  }

  // "parameters": required when the family has parameters, and then it sets every one of them; a family
  // without parameters accepts no field or an empty object.
  std::map<std::string, bool> read_parameters(const json& doc, const Family& family) const {
    std::map<std::string, bool> out;
    if (!doc.contains("parameters")) {
      if (!family.parameters.empty())
        fail("parameters",
             fmt::format("is missing (family '{}' needs: {})", family.name, parameter_names(family)));
      return out;
    }
    const json& parameters = object_field(doc, "parameters");
    for (const auto& [name, value] : parameters.items()) {
      const bool known = std::any_of(family.parameters.begin(), family.parameters.end(),
                                     [&](const ParameterSpec& p) { return p.name == name; });
      if (!known)
        fail("parameters." + name, family.parameters.empty()
                                       ? fmt::format("family '{}' has no parameters", family.name)
                                       : fmt::format("not a parameter of family '{}' (known: {})",
                                                     family.name, parameter_names(family)));
      if (!value.is_boolean()) fail("parameters." + name, "must be true or false");
      out[name] = value.get<bool>();
    }
    for (const ParameterSpec& p : family.parameters)
      if (!out.contains(p.name)) fail("parameters." + p.name, "is missing (" + p.meaning + ")");
    return out;
  }

  // "tracks": the languages a solution may be written in; CUDA alone when the field is left out.
  std::vector<std::string> read_tracks(const json& doc) const {
    if (!doc.contains("tracks")) return {cuda_track().name()};
    std::vector<std::string> tracks;
    for (const json& item : array_field(doc, "tracks")) {
      if (!item.is_string() || !find_track(item.get<std::string>()))
        fail("tracks", fmt::format("{} is not a track (known: {})", item.dump(), track_names()));
      if (std::find(tracks.begin(), tracks.end(), item.get<std::string>()) != tracks.end())
        fail("tracks", fmt::format("'{}' appears twice", item.get<std::string>()));
      tracks.push_back(item.get<std::string>());
    }
    if (tracks.empty()) fail("tracks", "must name at least one track (or leave the field out: cuda alone)");
    return tracks;
  }

  // "groups": the task groups the task belongs to (run --tasks @name), each a lowercase name, none twice.
  std::vector<std::string> read_groups(const json& doc) const {
    std::vector<std::string> groups;
    if (!doc.contains("groups")) return groups;
    for (const json& item : array_field(doc, "groups")) {
      if (!item.is_string() || !plain_name(item.get<std::string>()))
        fail("groups",
             fmt::format("{} is not a group name (lowercase letters, digits and '-')", item.dump()));
      if (std::find(groups.begin(), groups.end(), item.get<std::string>()) != groups.end())
        fail("groups", fmt::format("'{}' appears twice", item.get<std::string>()));
      groups.push_back(item.get<std::string>());
    }
    return groups;
  }

  // Lowercase letters, digits, '-', '.' and '_', starting with a letter or digit: a task id or a group name,
  // which a task selection can then name without quoting (no glob character, no comma).
  static bool plain_name(const std::string& name, bool dots = false) {
    if (name.empty() || !std::isalnum(static_cast<unsigned char>(name[0]))) return false;
    return std::all_of(name.begin(), name.end(), [&](char c) {
      return (std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) ||
              c == '-' || (dots && (c == '.' || c == '_')));
    });
  }

  static std::string parameter_names(const Family& family) {
    return fmt::format("{}",
                       fmt::join(family.parameters | std::views::transform(&ParameterSpec::name), ", "));
  }

  RequiredFamily read_family(const json& object, const std::string& where) const {
    if (!object.is_object()) fail(where, "must be an object");
    only_known(object, where + ".", {"name", "ptx", "sass", "does_the_math"});
    RequiredFamily f;
    f.name = string_field(object, "name", where + ".");
    const auto& known = instruction_family_names();
    if (std::find(known.begin(), known.end(), f.name) == known.end())
      fail(where + ".name",
           fmt::format("unknown instruction family '{}' (known: {})", f.name, fmt::join(known, ", ")));
    f.ptx = string_list(object, "ptx", where);
    f.sass = string_list(object, "sass", where);
    if (object.contains("does_the_math")) {
      if (!object["does_the_math"].is_boolean()) fail(where + ".does_the_math", "must be true or false");
      f.does_the_math = object["does_the_math"].get<bool>();
    }
    return f;
  }

  std::filesystem::path file_;
};

}  // namespace

Task load_task_file(const std::filesystem::path& file) {
  return TaskReader(file).read();
}

TaskRegistry TaskRegistry::load(const std::filesystem::path& dir) {
  if (!std::filesystem::is_directory(dir)) throw ConfigError(dir.string() + ": task folder not found");
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().extension() == ".json") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  TaskRegistry registry;
  for (const auto& file : files) {
    Task task = load_task_file(file);
    if (const Task* other = registry.find(task.id))
      throw TaskFileError(file, "id",
                          fmt::format("'{}' is also the id of {}", task.id, other->file.string()));
    registry.tasks_.push_back(std::move(task));
  }
  return registry;
}

const Task* TaskRegistry::find(const std::string& id) const {
  for (const auto& t : tasks_)
    if (t.id == id) return &t;
  return nullptr;
}

bool TaskSelection::matches(const std::string& task_id) const {
  return std::any_of(globs_.begin(), globs_.end(),
                     [&](const std::string& glob) { return fnmatch(glob.c_str(), task_id.c_str(), 0) == 0; });
}

TaskSelection TaskRegistry::select(const std::string& text) const {
  return select(split(text, ','));
}

TaskSelection TaskRegistry::select(const std::vector<std::string>& items) const {
  const std::string text = fmt::format("{}", fmt::join(items, ","));
  std::vector<std::string> globs;
  for (const std::string& item : items) {
    if (item.empty()) throw ConfigError(fmt::format("task selection '{}': an empty item", text));
    if (!item.starts_with("@")) {
      globs.push_back(item);
      continue;
    }
    const std::string group = item.substr(1);
    size_t members = 0;
    for (const Task& t : tasks_)
      if (std::find(t.groups.begin(), t.groups.end(), group) != t.groups.end())
        globs.push_back(t.id), ++members;
    if (members == 0)
      throw ConfigError(fmt::format("task selection '{}': no task group '{}' (groups: {})", text, group,
                                    fmt::join(groups(), ", ")));
  }
  return TaskSelection(std::move(globs));
}

std::vector<const Task*> TaskRegistry::matching(const std::string& text) const {
  const TaskSelection selection = select(text);
  std::vector<const Task*> out;
  for (const auto& t : tasks_)
    if (selection.matches(t.id)) out.push_back(&t);
  return out;
}

std::vector<std::string> TaskRegistry::groups() const {
  std::set<std::string> names;
  for (const Task& t : tasks_) names.insert(t.groups.begin(), t.groups.end());
  return {names.begin(), names.end()};
}

std::string describe_tolerances(const Task& task) {
  auto rule = [](const Tolerance& t) {
    return fmt::format("|out - ref| <= {} + {} * |ref|", t.atol, t.rtol);
  };
  std::string out = rule(task.tolerance);
  if (!task.tolerances.empty()) out = "every output but those named: " + out;
  for (const auto& [output, tolerance] : task.tolerances)
    out += fmt::format("; {}: {}", output, rule(tolerance));
  return out;
}

std::string describe_parameters(const Task& task) {
  std::vector<std::string> parts;
  for (const auto& [name, value] : task.parameters) parts.push_back(fmt::format("{} = {}", name, value));
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string describe_baseline(const Task& task) {
  const BaselineSpec* baseline = task.family_spec().baseline(task.baseline);
  return baseline == nullptr ? task.baseline : fmt::format("{} ({})", baseline->name, baseline->meaning);
}

json to_json(const Task& task) {
  auto shape_json = [](const Shape& s) {
    json j = s.dims;
    j["label"] = s.label;
    return j;
  };
  json checks = json::array();
  for (const auto& s : task.check_shapes) checks.push_back(shape_json(s));
  json required = json::array();
  for (const auto& f : task.required)
    required.push_back(
        {{"name", f.name}, {"ptx", f.ptx}, {"sass", f.sass}, {"does_the_math", f.does_the_math}});
  json tolerances = json::object();
  for (const auto& [output, t] : task.tolerances) tolerances[output] = {{"rtol", t.rtol}, {"atol", t.atol}};
  const Family& family = task.family_spec();
  return {{"id", task.id},
          {"title", task.title},
          {"family", task.family},
          {"arch", task.arch},
          {"dtype", task.dtype},
          {"mode", to_string(task.mode)},
          {"description", task.description},
          {"shapes", {{"main", shape_json(task.main_shape)}, {"check", checks}}},
          {"required", required},
          {"coverage_threshold", task.coverage_threshold > 0 ? json(task.coverage_threshold) : json()},
          {"tolerance", {{"rtol", task.tolerance.rtol}, {"atol", task.tolerance.atol}}},
          {"tolerances", tolerances},
          {"parameters", task.parameters},
          {"baseline", task.baseline},
          {"tracks", task.tracks},
          {"groups", task.groups},
          {"flops", family.flops},
          {"flops_main", task.flops(task.main_shape)},
          {"entry_point", c_declarations(family)},
          {"file", task.file.string()}};
}

}  // namespace ptxbench
