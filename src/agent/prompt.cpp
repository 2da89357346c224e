#include "agent/prompt.h"

#include <fmt/format.h>
#include <algorithm>

#include "task/catalog.h"
#include "util/files.h"
#include "util/text.h"

namespace ptxbench::agent {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A reply without code is shown back trimmed to this many characters (head and tail).
constexpr size_t kReplyShown = 3000;

std::string trim_middle(const std::string& text, size_t limit) {
  if (text.size() <= limit) return text;
  const size_t half = limit / 2;
  const std::string head = utf8_head(text, half), tail = utf8_tail(text, half);
  return fmt::format("{}\n[... {} bytes omitted ...]\n{}", head, text.size() - head.size() - tail.size(),
                     tail);
}

}  // namespace

std::string to_string(KnowledgeLevel level) {
  switch (level) {
    case KnowledgeLevel::params:
      return "params";
    case KnowledgeLevel::templates:
      return "templates";
    case KnowledgeLevel::contracts:
      return "contracts";
  }
  return "params";
}

std::optional<KnowledgeLevel> knowledge_level_from_string(const std::string& text) {
  for (auto level : {KnowledgeLevel::params, KnowledgeLevel::templates, KnowledgeLevel::contracts})
    if (to_string(level) == text) return level;
  return std::nullopt;
}

std::string system_prompt() {
  return R"(You write GPU kernels for ptxbench, a benchmark of CUDA kernels that must use an architecture's own PTX instructions.

Your answer is one complete .cu file that:
- defines the task's entry point with C linkage (extern "C"), exactly as declared in <ptxbench/abi.h>;
- computes the task's result correctly for every shape listed (any M), within the tolerance;
- executes the task's required PTX instruction families. This is checked by counting the instructions that actually run (Nsight Compute), so instructions in code that never runs do not count, and the MMA family must do (nearly) all of the FLOPs;
- enqueues all GPU work on `stream`, and does not synchronise, allocate or free memory, create streams or events, or keep state between calls;
- uses no vendor library (cuBLAS, cuDNN, CUTLASS/CuTe), no dlopen, processes, threads, files or network;
- is as fast as you can make it: it is timed against the vendor library.
Inline PTX (asm volatile) is expected; where a kit of PTX template functions is shown, you may #include it.

The file is compiled with nvcc, checked for forbidden means, run under compute-sanitizer, checked against a trusted reference on fresh random inputs, profiled and timed.

Answer with the whole file in one fenced code block that starts with ```cuda. Only the last code block of your reply is used; keep any explanation short and outside it. Later turns show you the verdict on your previous file: answer each with the whole corrected file, again in one ```cuda block.)";
}

std::string task_statement(const Task& task) {
  const FamilyInfo* family = find_family(task.family);
  const ArchInfo* arch = find_arch(task.arch);
  std::string out = fmt::format("Task: {}\n{}\n\n{}\n\n", task.id, task.title, task.description);
  out += fmt::format(
      "Architecture: {} ({}), compiled with nvcc -gencode {} -std=c++20 -O3 -shared -cudart shared\n",
      task.arch, arch ? arch->marketing : "?", arch ? arch->gencode : "?");
  out += task.mode == TaskMode::full ? fmt::format("The solution is run, checked and timed on a {} GPU.\n",
                                                   arch ? arch->marketing : "?")
                                     : "This task is compiled and checked statically only (no GPU of this "
                                       "architecture runs it here): the "
                                       "required instructions must be in the compiled code.\n";
  if (family) {
    out += fmt::format("\nEntry point (declared in <ptxbench/abi.h>; define it with extern \"C\"):\n{}\n",
                       family->signature);
    out += fmt::format("It computes: {}\n", family->semantics);
  }
  out += "\nShapes (every one is checked on fresh random inputs; the first is timed):\n";
  for (const auto& shape : task.all_shapes())
    out += fmt::format("  {:<8} {}\n", shape.label, shape.to_string());
  if (const std::string parameters = describe_parameters(task); !parameters.empty())
    out += fmt::format("Parameters of every call: {}\n", parameters);
  out += fmt::format(
      "Tolerance: every element must satisfy {} against an fp32-accumulated reference; NaN and Inf never "
      "pass.\n",
      describe_tolerances(task));
  out += "\nRequired instruction families (each must execute):\n";
  std::string math_family;
  for (const auto& f : task.required) {
    out += fmt::format("  {:<10} PTX {}   (SASS {}){}\n", f.name, fmt::join(f.ptx, " / "),
                       fmt::join(f.sass, " / "), f.does_the_math ? ", does the math" : "");
    if (f.does_the_math) math_family = f.name;
  }
  if (!math_family.empty())
    out += fmt::format("Coverage: the {} instructions must account for at least {:.0f}% of the FLOPs ({}).\n",
                       math_family, task.coverage_threshold * 100, task.flops_formula);
  out += fmt::format("Speed is measured against: {}.\n", describe_baseline(task));
  out += "\nStart the file with #include <ptxbench/abi.h> (it includes cuda_bf16.h and cuda_runtime.h).\n";
  return out;
}

std::string knowledge_text(const fs::path& kits_dir, const Task& task, KnowledgeLevel level) {
  const ArchInfo* arch = find_arch(task.arch);
  const std::string kit = arch ? arch->kit : task.arch;
  const std::string marketing = arch ? arch->marketing : task.arch;
  const fs::path dir = kits_dir / kit;
  std::string out = fmt::format("Architecture knowledge ({} level) from the {} kit, kits/{}:\n",
                                to_string(level), marketing, kit);
  if (!fs::is_directory(dir))
    return out + fmt::format(
                     "The {} kit does not exist yet: no parameters, template functions or contracts can be "
                     "shown. Work from the task statement and write the PTX inline.\n",
                     marketing);

  auto include_file = [&](const fs::path& file, bool code) {
    const std::string name = fs::relative(file, kits_dir.parent_path()).generic_string();
    if (!fs::is_regular_file(file)) {
      out += fmt::format("\n----- {} -----\n(not in this kit yet)\n", name);
      return;
    }
    const std::string text = read_file(file);
    out += fmt::format("\n----- {} -----\n", name);
    out += code ? fenced_cuda(text) : text;
    if (!out.ends_with('\n')) out += '\n';
  };

  include_file(dir / "params.md", false);
  if (level == KnowledgeLevel::params) {
    out += "\nNo kit header is shown at this level: write the PTX instructions yourself with inline asm.\n";
    return out;
  }
  std::vector<fs::path> headers;
  if (fs::is_directory(dir / "ptx"))
    for (const auto& entry : fs::directory_iterator(dir / "ptx"))
      if (entry.is_regular_file() && entry.path().extension() == ".cuh") headers.push_back(entry.path());
  std::sort(headers.begin(), headers.end());
  out += fmt::format(
      "\nThe kit's PTX template functions follow. kits/{}/ptx is on the include path: #include <{}.cuh> "
      "brings in "
      "all of them (namespace ptxkit::{}), or include one file by its name.\n",
      kit, kit, kit);
  if (headers.empty()) out += "(the kit has no template functions yet)\n";
  for (const auto& header : headers) include_file(header, true);
  if (level == KnowledgeLevel::contracts) include_file(dir / "contracts.md", false);
  return out;
}

std::string first_message(const Task& task, const std::string& knowledge) {
  return fmt::format("{}\n{}\nWrite the solution: the whole .cu file in one ```cuda block.",
                     task_statement(task), knowledge);
}

std::string fenced_cuda(const std::string& code) {
  return fmt::format("```cuda\n{}{}```\n", code, code.ends_with('\n') ? "" : "\n");
}

llm::Request build_request(const std::string& first_user_message, int index,
                           const std::optional<PreviousTurn>& previous,
                           const std::vector<EarlierTurn>& earlier) {
  llm::Request request{.system = system_prompt(), .messages = {{"user", first_user_message}}};
  if (index <= 1 || !previous) return request;
  request.messages.push_back({"assistant", previous->code ? fenced_cuda(*previous->code)
                                                          : trim_middle(previous->reply, kReplyShown)});
  std::string text = fmt::format("Verdict on your turn {} reply:\n{}", previous->index, previous->feedback);
  if (!text.ends_with('\n')) text += '\n';
  if (!earlier.empty()) {
    text += "\nEarlier turns:\n";
    for (const auto& e : earlier) text += fmt::format("- turn {}: {}\n", e.index, e.outcome);
  }
  text += fmt::format("\nThis is turn {}. ", index);
  text += previous->passed
              ? "The file passed every stage: make it faster while keeping it correct and its required "
                "instructions "
                "executed. Answer with the whole file in one ```cuda block."
              : "Fix the problems above. Answer with the whole corrected .cu file in one ```cuda block.";
  request.messages.push_back({"user", text});
  return request;
}

json to_json(const llm::Request& request) {
  json messages = json::array();
  for (const auto& m : request.messages) messages.push_back({{"role", m.role}, {"content", m.content}});
  return {{"system", request.system}, {"messages", messages}};
}

llm::Request request_from_json(const json& doc) {
  llm::Request request{.system = doc.at("system").get<std::string>()};
  for (const auto& m : doc.at("messages"))
    request.messages.push_back({m.at("role").get<std::string>(), m.at("content").get<std::string>()});
  return request;
}

}  // namespace ptxbench::agent
