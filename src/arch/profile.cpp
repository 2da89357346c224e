#include "arch/profile.h"

#include <algorithm>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "util/incbin.h"

// The profiles, inlined (CMakeLists.txt names the files and makes this object depend on them).
PTXBENCH_INCBIN(ptxbench_arch_common, PTXBENCH_ARCH_DIR "/common.json")
PTXBENCH_INCBIN(ptxbench_arch_sm_90a, PTXBENCH_ARCH_DIR "/sm_90a.json")
PTXBENCH_INCBIN(ptxbench_arch_sm_100a, PTXBENCH_ARCH_DIR "/sm_100a.json")

namespace ptxbench {
namespace {

using json = nlohmann::json;

// Reads one profile's fields, naming the first that is missing or of the wrong type.
class Reader {
 public:
  explicit Reader(std::string where) : where_(std::move(where)) {}

  const json& field(const json& object, const std::string& key) const {
    if (!object.is_object() || !object.contains(key)) fail(key, "is missing");
    return object.at(key);
  }
  std::string string(const json& object, const std::string& key) const {
    const json& value = field(object, key);
    if (!value.is_string() || value.get<std::string>().empty()) fail(key, "must be a non-empty string");
    return value.get<std::string>();
  }
  int64_t integer(const json& object, const std::string& key) const {
    const json& value = field(object, key);
    if (!value.is_number_integer() || value.get<int64_t>() <= 0) fail(key, "must be a positive integer");
    return value.get<int64_t>();
  }
  std::vector<std::string> strings(const json& object, const std::string& key) const {
    const json& value = field(object, key);
    if (!value.is_array()) fail(key, "must be a list of strings");
    std::vector<std::string> out;
    for (const json& item : value) {
      if (!item.is_string() || item.get<std::string>().empty()) fail(key, "must be a list of strings");
      out.push_back(item.get<std::string>());
    }
    return out;
  }
  InstructionFamilySpec family(const json& object, const std::string& key) const {
    const json& value = field(object, key);
    const Reader inner(where_ + "." + key);
    InstructionFamilySpec spec{.name = inner.string(value, "name"),
                               .ptx = inner.strings(value, "ptx"),
                               .sass = inner.strings(value, "sass"),
                               .why = value.value("why", std::string())};
    if (spec.ptx.empty() || spec.sass.empty()) inner.fail("ptx", "a family needs PTX and SASS opcodes");
    return spec;
  }
  std::vector<MmaOpcodes> mma_opcodes(const json& object) const {
    const json& list = field(object, "mma_opcodes");
    if (!list.is_array()) fail("mma_opcodes", "must be a list");
    std::vector<MmaOpcodes> out;
    for (size_t i = 0; i < list.size(); ++i) {
      const Reader inner(where_ + ".mma_opcodes[" + std::to_string(i) + "]");
      MmaOpcodes mma{.opcodes = inner.strings(list[i], "opcodes"), .warps = inner.integer(list[i], "warps")};
      mma.shape_in_name = list[i].value("shape_in_name", false);
      if (list[i].contains("shapes"))
        for (const auto& [modifier, mnk] : inner.field(list[i], "shapes").items()) {
          if (!mnk.is_array() || mnk.size() != 3) inner.fail("shapes." + modifier, "must be [M, N, K]");
          mma.shapes[modifier] = {mnk[0].get<int64_t>(), mnk[1].get<int64_t>(), mnk[2].get<int64_t>()};
        }
      out.push_back(std::move(mma));
    }
    return out;
  }

  [[noreturn]] void fail(const std::string& key, const std::string& problem) const {
    throw std::invalid_argument("architecture profile " + where_ + ": '" + key + "' " + problem);
  }

 private:
  std::string where_;
};

template <typename T>
void append(std::vector<T>& to, const std::vector<T>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

std::string_view base_name(std::string_view opcode) {
  return opcode.substr(0, opcode.find('.'));
}

}  // namespace

ArchProfile parse_profile(std::string_view text, std::string_view common_text) {
  const json doc = json::parse(text, nullptr, false), common = json::parse(common_text, nullptr, false);
  if (doc.is_discarded() || common.is_discarded())
    throw std::invalid_argument("architecture profile: not JSON");
  const Reader r(doc.value("name", std::string("?"))), c("common");
  ArchProfile p;
  p.name = r.string(doc, "name");
  p.marketing = r.string(doc, "marketing");
  p.gencode = r.string(doc, "gencode");
  p.compute_capability = static_cast<int>(r.integer(doc, "compute_capability"));
  const std::string runtime = r.string(doc, "runtime");
  if (runtime != "full" && runtime != "static") r.fail("runtime", "must be \"full\" or \"static\"");
  p.runs = runtime == "full";
  p.runs_text = r.string(doc, "runs");
  p.tracks = r.strings(doc, "tracks");
  p.kit = r.string(doc, "kit");
  p.dense_bf16_flops_per_sm_per_clock = static_cast<int>(r.integer(doc, "dense_bf16_flops_per_sm_per_clock"));
  p.math = r.family(doc, "math");
  for (const auto& [key, value] : c.field(common, "families").items())
    p.families[key] = c.family(common.at("families"), key);
  p.ptx_mnemonics = r.strings(doc, "ptx_mnemonics");
  append(p.ptx_mnemonics, c.strings(common, "ptx_mnemonics"));
  p.sass_opcodes = r.strings(doc, "sass_opcodes");
  append(p.sass_opcodes, c.strings(common, "sass_opcodes"));
  p.mma_opcodes = r.mma_opcodes(doc);
  append(p.mma_opcodes, c.mma_opcodes(common));
  const json& counters = r.field(doc, "counters");
  if (counters.is_null()) {
    p.counters_missing = r.string(doc, "counters_missing");
  } else {
    const auto counter = [&](const std::string& key) {
      const Reader inner(p.name + ".counters." + key);
      const json& value = r.field(counters, key);
      return CounterSpec{.metric = inner.string(value, "metric"),
                         .opcodes = value.contains("opcodes") ? inner.strings(value, "opcodes")
                                                              : std::vector<std::string>{}};
    };
    p.counters = ArchProfile::Counters{.mma = counter("mma"), .tensor = counter("tensor")};
  }
  const json& profile = c.field(common, "profile");
  const Reader pr("common.profile");
  p.profile.sections = pr.strings(profile, "sections");
  for (const auto& [figure, metrics] : pr.field(profile, "figures").items())
    p.profile.figures[figure] = pr.strings(profile.at("figures"), figure);
  if (const auto tensor = r.strings(doc, "profile_tensor_pipe"); !tensor.empty())
    p.profile.figures["tensor_pipe_pct"] = tensor;
  p.profile.stall_prefix = pr.string(pr.field(profile, "stalls"), "prefix");
  p.profile.stall_suffix = pr.string(pr.field(profile, "stalls"), "suffix");
  p.baselines = r.strings(doc, "baselines");
  // Every opcode a family or the MMA table names is one the profile knows.
  std::vector<const InstructionFamilySpec*> families = {&p.math};
  for (const auto& [key, family] : p.families) families.push_back(&family);
  for (const InstructionFamilySpec* family : families) {
    for (const std::string& ptx : family->ptx)
      if (!known_instruction(p.ptx_mnemonics, ptx))
        r.fail("ptx_mnemonics", "lacks " + family->name + "'s " + ptx);
    for (const std::string& sass : family->sass)
      if (!known_instruction(p.sass_opcodes, sass))
        r.fail("sass_opcodes", "lacks " + family->name + "'s " + sass);
  }
  for (const MmaOpcodes& mma : p.mma_opcodes)
    for (const std::string& opcode : mma.opcodes)
      if (!known_instruction(p.sass_opcodes, opcode))
        r.fail("mma_opcodes", "names " + opcode + ", no opcode of it");
  return p;
}

const std::vector<ArchProfile>& all_archs() {
  static const std::vector<ArchProfile> archs = [] {
    const std::string_view common(ptxbench_arch_common,
                                  static_cast<size_t>(ptxbench_arch_common_end - ptxbench_arch_common));
    const auto text = [](const char* begin, const char* end) {
      return std::string_view(begin, static_cast<size_t>(end - begin));
    };
    return std::vector<ArchProfile>{
        parse_profile(text(ptxbench_arch_sm_90a, ptxbench_arch_sm_90a_end), common),
        parse_profile(text(ptxbench_arch_sm_100a, ptxbench_arch_sm_100a_end), common)};
  }();
  return archs;
}

const ArchProfile* find_arch(const std::string& name) {
  for (const auto& a : all_archs())
    if (a.name == name) return &a;
  return nullptr;
}

const ArchProfile* arch_of_compute_capability(int compute_capability) {
  for (const auto& a : all_archs())
    if (a.compute_capability == compute_capability) return &a;
  return nullptr;
}

bool ProfileSpec::reads(std::string_view metric) const {
  if (metric.size() > stall_prefix.size() + stall_suffix.size() && metric.starts_with(stall_prefix) &&
      metric.ends_with(stall_suffix))
    return true;
  return std::any_of(figures.begin(), figures.end(), [&](const auto& figure) {
    return std::find(figure.second.begin(), figure.second.end(), metric) != figure.second.end();
  });
}

bool known_instruction(const std::vector<std::string>& known, const std::string& name) {
  return std::any_of(known.begin(), known.end(), [&](const std::string& k) {
    return name == k || (name.size() > k.size() + 1 && name.starts_with(k) && name[k.size()] == '.');
  });
}

std::vector<std::string> instruction_family_names() {
  std::set<std::string> names;
  for (const ArchProfile& a : all_archs()) {
    names.insert(a.math.name);
    for (const auto& [key, family] : a.families) names.insert(family.name);
  }
  return {names.begin(), names.end()};
}

bool is_mma_opcode(std::string_view opcode) {
  const std::string_view name = base_name(opcode);
  for (const ArchProfile& a : all_archs())
    for (const MmaOpcodes& mma : a.mma_opcodes)
      if (std::find(mma.opcodes.begin(), mma.opcodes.end(), name) != mma.opcodes.end()) return true;
  return false;
}

std::optional<MmaShape> parse_mma_shape(std::string_view opcode) {
  const std::string_view name = base_name(opcode);
  std::vector<std::string_view> modifiers;
  for (std::string_view rest = opcode.substr(name.size()); !rest.empty();) {
    rest.remove_prefix(1);  // the '.'
    const auto dot = rest.find('.');
    modifiers.push_back(rest.substr(0, dot));
    rest = dot == std::string_view::npos ? std::string_view{} : rest.substr(dot);
  }
  const auto number = [](std::string_view text, int64_t& value) {
    if (text.empty() || text.size() > 6) return false;
    value = 0;
    for (const char ch : text) {
      if (ch < '0' || ch > '9') return false;
      value = value * 10 + (ch - '0');
    }
    return value > 0;
  };
  for (const ArchProfile& a : all_archs())
    for (const MmaOpcodes& mma : a.mma_opcodes) {
      if (std::find(mma.opcodes.begin(), mma.opcodes.end(), name) == mma.opcodes.end()) continue;
      for (const std::string_view part : modifiers) {
        if (mma.shape_in_name) {
          const auto x1 = part.find('x');
          const auto x2 = x1 == std::string_view::npos ? x1 : part.find('x', x1 + 1);
          MmaShape shape{.warps_per_instruction = mma.warps};
          if (x2 != std::string_view::npos && number(part.substr(0, x1), shape.m) &&
              number(part.substr(x1 + 1, x2 - x1 - 1), shape.n) && number(part.substr(x2 + 1), shape.k))
            return shape;
        }
        if (const auto it = mma.shapes.find(std::string(part)); it != mma.shapes.end())
          return MmaShape{it->second[0], it->second[1], it->second[2], mma.warps};
      }
      return std::nullopt;  // one of its opcodes, with no shape in the name
    }
  return std::nullopt;
}

}  // namespace ptxbench
