#include "family/family.h"

#include <cstdint>
#include <stdexcept>

namespace ptxbench {

const DTypeInfo& dtype_info(DType dtype) {
  static const DTypeInfo table[] = {
      {DType::bf16, "bf16", "__nv_bfloat16", "torch.bfloat16", "<i2", 2},
      {DType::f32, "fp32", "float", "torch.float32", "<f4", 4},
      {DType::i32, "int32", "int", "torch.int32", "<i4", 4},
      {DType::bytes, "bytes", "void", "torch.uint8", "|u1", 1},
  };
  for (const DTypeInfo& info : table)
    if (info.dtype == dtype) return info;
  throw std::invalid_argument("unknown dtype " + std::to_string(static_cast<int>(dtype)));
}

const TensorSpec* Family::tensor(const std::string& tensor_name) const {
  for (const TensorSpec& t : tensors)
    if (t.name == tensor_name) return &t;
  return nullptr;
}

const ScalarSpec* Family::scalar(const std::string& scalar_name) const {
  for (const ScalarSpec& s : scalars)
    if (s.name == scalar_name) return &s;
  return nullptr;
}

const BaselineSpec* Family::baseline(const std::string& baseline_name) const {
  for (const BaselineSpec& b : baselines)
    if (b.name == baseline_name) return &b;
  return nullptr;
}

std::vector<const TensorSpec*> Family::with_role(Role role) const {
  std::vector<const TensorSpec*> out;
  for (const TensorSpec& t : tensors)
    if (t.role == role) out.push_back(&t);
  return out;
}

std::vector<std::string> Family::symbols() const {
  if (workspace) return {entry_point, workspace->symbol};
  return {entry_point};
}

const Family* find_family(const std::string& name) {
  for (const Family& f : all_families())
    if (f.name == name) return &f;
  return nullptr;
}

Values values_of(const Family& family, const std::map<std::string, int64_t>& dims,
                 const std::map<std::string, bool>& parameters) {
  Values values(dims.begin(), dims.end());
  for (const auto& [name, value] : parameters) values[name] = value ? 1 : 0;
  for (const auto& [name, expression] : family.derived)
    values[name] = evaluate_expression(expression, values);
  return values;
}

int64_t elements(const TensorSpec& tensor, const Values& values) {
  int64_t count = 1;
  for (const std::string& extent : tensor.shape)
    if (__builtin_mul_overflow(count, evaluate_expression(extent, values), &count))
      throw std::invalid_argument("the element count of " + tensor.name + " overflows 64 bits");
  return count;
}

int64_t integer_scalar(const Family& family, const std::string& name, const Values& values) {
  const ScalarSpec* scalar = family.scalar(name);
  if (scalar == nullptr || scalar->kind != ScalarSpec::integer)
    throw std::logic_error(family.name + ": no integer scalar " + name);
  return evaluate_expression(scalar->value, values);
}

std::string check_shape(const Family& family, const Values& values) {
  for (const ShapeRule& rule : family.shape_rules)
    if (evaluate_expression(rule.condition, values) == 0) return rule.message + " (" + rule.condition + ")";
  for (const TensorSpec& tensor : family.tensors) {
    if (tensor.role == Role::workspace) continue;
    int64_t bytes = 0;
    try {
      if (!__builtin_mul_overflow(elements(tensor, values), int64_t{4}, &bytes)) continue;
    } catch (const std::invalid_argument&) {
    }
    return "tensor " + tensor.name + " is too large: its size in bytes overflows 64 bits";
  }
  // The entry point takes its integers as int: a derived one (a token count, a page pool) must fit.
  for (const ScalarSpec& scalar : family.scalars) {
    if (scalar.kind != ScalarSpec::integer) continue;
    const int64_t value = integer_scalar(family, scalar.name, values);
    if (value < INT32_MIN || value > INT32_MAX)
      return "the entry point's int " + scalar.name + " = " + std::to_string(value) +
             " does not fit in 32 bits";
  }
  return "";
}

// ---- Derived artefacts

namespace {

// A declaration's parameter list, broken before a parameter that would pass column 110, continuation lines
// aligned after the opening parenthesis.
std::string declaration(const std::string& head, const std::vector<std::string>& parameters) {
  const std::string indent(head.size() + 1, ' ');
  std::string text = head + "(", line = text;
  for (size_t k = 0; k < parameters.size(); ++k) {
    const std::string piece = parameters[k] + (k + 1 < parameters.size() ? "," : ")");
    if (k > 0 && line.size() + 1 + piece.size() > 110) {
      text += "\n" + indent;
      line = indent;
    } else if (k > 0) {
      text += " ";
      line += " ";
    }
    text += piece;
    line += piece;
  }
  if (parameters.empty()) text += ")";
  return text;
}

std::string c_parameter(const Family& family, const std::string& name) {
  return c_type(family, name) + " " + name;
}

std::string python_parameter(const Family& family, const std::string& name) {
  if (const TensorSpec* t = family.tensor(name))
    return name + (t->role == Role::workspace ? ": torch.Tensor | None" : ": torch.Tensor");
  const ScalarSpec* s = family.scalar(name);
  if (s == nullptr)
    throw std::logic_error(family.name + ": argument " + name + " is neither tensor nor scalar");
  return name + (s->kind == ScalarSpec::real ? ": float" : ": int");
}

}  // namespace

std::string c_type(const Family& family, const std::string& name) {
  if (const TensorSpec* t = family.tensor(name))
    return std::string(t->role == Role::input ? "const " : "") + dtype_info(t->dtype).c_type + "*";
  const ScalarSpec* s = family.scalar(name);
  if (s == nullptr)
    throw std::logic_error(family.name + ": argument " + name + " is neither tensor nor scalar");
  return s->kind == ScalarSpec::real ? "float" : "int";
}

namespace {

// The workspace function's and the entry point's signatures in one language: how it writes a parameter, the
// two heads ("size_t NAME" / "int NAME"), the stream parameter and what ends each signature.
struct Language {
  std::string (*parameter)(const Family&, const std::string&);
  std::string size_head, entry_head, stream, size_end, entry_end;
};

std::string signatures(const Family& family, const Language& language) {
  const auto parameters = [&](const std::vector<std::string>& names) {
    std::vector<std::string> out;
    for (const std::string& name : names) out.push_back(language.parameter(family, name));
    return out;
  };
  std::string text;
  if (family.workspace)
    text +=
        declaration(language.size_head + family.workspace->symbol, parameters(family.workspace->arguments)) +
        language.size_end + "\n";
  std::vector<std::string> entry = parameters(family.arguments);
  entry.push_back(language.stream);
  return text + declaration(language.entry_head + family.entry_point, entry) + language.entry_end;
}

}  // namespace

std::string c_declarations(const Family& family) {
  return signatures(family, {c_parameter, "size_t ", "int ", "cudaStream_t stream", ";", ";"});
}

std::string python_signatures(const Family& family) {
  return signatures(family,
                    {python_parameter, "def ", "def ", "stream: torch.cuda.Stream", " -> int", " -> int"});
}

std::string argument_codes(const Family& family) {
  std::string codes;
  for (const std::string& a : family.arguments) {
    if (family.tensor(a) != nullptr)
      codes += 't';
    else if (const ScalarSpec* s = family.scalar(a))
      codes += s->kind == ScalarSpec::real ? 'f' : 'i';
    else
      throw std::logic_error(family.name + ": argument " + a + " is neither tensor nor scalar");
  }
  return codes;
}

}  // namespace ptxbench
