// A task family in one declarative description, which every layer reads: the task loader (dimensions,
// parameters, shape rules, baselines), the static stage (the symbols a library must export), the prompts (the
// C and Python signatures), the runner (the tensors it allocates, fills, passes, compares, and the FLOPs and
// bytes of a call), the solution worker (the calls, generated from it at build time: family_codegen.cpp) and
// the Python host of Triton solutions (the argument order and each tensor's shape and type, sent with each
// request). Adding a family is one descriptor (families/<name>.cpp, listed in families.cpp), its entry point
// documented in include/ptxbench/abi.h, and its fp32 reference in the runner (runner/references.cpp).
//
// Plain C++ and the standard library only: the runner, which reads it too, builds where ptxbench's other
// dependencies are missing.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ptxbench {

enum class DType : uint8_t { bf16 = 1, f32 = 2, i32 = 3, bytes = 4 };

struct DTypeInfo {
  DType dtype;
  const char* name;     // "bf16"
  const char* c_type;   // "__nv_bfloat16"
  const char* torch;    // "torch.bfloat16"
  const char* typestr;  // __cuda_array_interface__'s ("<i2": bf16 travels as int16 and is viewed as bf16)
  int bytes;
};
const DTypeInfo& dtype_info(DType dtype);

enum class Role : uint8_t {
  input,      // read-only; the runner fills it before each call and checks it is unchanged after
  output,     // written by the call; poisoned with NaN before it, compared with the fp32 reference after
  workspace,  // scratch the solution sizes (Family::workspace), undefined on entry, never compared
};

// How the runner fills an input before each call.
struct Fill {
  enum Kind : uint8_t {
    normal,    // N(0, 1 / variance_divisor) from the runner's Philox generator, per call
    computed,  // computed by the family's reference in the runner from the other inputs (the backward's O)
  } kind = normal;
  std::string variance_divisor = "1";  // an expression over the dimensions: "K" for N(0, 1/K)
};

struct Tolerance {
  double rtol = 0;
  double atol = 0;
};

struct TensorSpec {
  std::string name;  // "Q", as the ABI, the verdicts and the task files' "tolerances" name it
  DType dtype = DType::bf16;
  Role role = Role::input;
  // Its extents, outermost first, each an expression over the dimensions ("B", "Sq", "Hq", "D"); row-major
  // and contiguous. A workspace has none: its bytes are the solution's answer.
  std::vector<std::string> shape;
  Fill fill;  // inputs
  // Outputs: compared as a matrix whose rows are the first `row_dims` extents, so that a mismatch's row and
  // column name a token and a feature; and the tolerance a task of the family starts from.
  int row_dims = 1;
  Tolerance tolerance;
};

// A scalar argument of the entry point: an int or a float, its value an expression over the dimensions and
// the parameters (a parameter is 0 or 1 there).
struct ScalarSpec {
  enum Kind : uint8_t { integer, real } kind = integer;
  std::string name;   // "B", "causal", "scale"
  std::string value;  // "B", "causal", "1/sqrt(D)"
};

// A switch of the computation that every task file of the family sets in its "parameters" object.
struct ParameterSpec {
  std::string name;     // "causal"
  std::string meaning;  // one line, for docs and errors
};

// A rule a shape must keep beyond "positive ints": a condition over the dimensions and the parameters
// ("Hq % Hkv == 0"), and what a broken one means.
struct ShapeRule {
  std::string condition;
  std::string message;
};

// The C function a solution defines to size its workspace: size_t NAME(scalars...), called on the host.
struct WorkspaceSpec {
  std::string symbol;
  std::vector<std::string> arguments;  // names of the family's integer scalars, in order
  uint64_t max_bytes = uint64_t{4} << 30;
};

// What a task of the family may measure a solution against (a task file's "baseline").
struct BaselineSpec {
  std::string name;     // "cublaslt", "vendor-attention", "none"
  std::string meaning;  // for people and models: what it is
  // Where it runs: "" in the runner itself (or nowhere, for "none"); else a Python module under the project
  // root that the runner hosts in a process of its own, as it hosts a Triton solution (its entry point has
  // the family's name and arguments).
  std::string module;
};

// The baseline name that measures nothing: the time stage reports the solution's time alone.
inline constexpr const char* kNoBaseline = "none";

// A cause that the correct stage names when the first mismatches of an output all stand in one ratio to the
// expected values (the ratio an expression over the dimensions, in reals), or, with `larger` set, when all of
// them are larger than expected and the parameter `when` (if any) is set.
struct MismatchHint {
  std::string output;  // "" for every output
  std::string ratio;   // "1/sqrt(D)"; "" with `larger`
  bool larger = false;
  std::string when;  // a parameter that must be true, or ""
  std::string text;  // "the softmax scale applied where it does not belong?"
};

struct Family {
  std::string name;               // "gemm"
  std::string entry_point;        // the C symbol a solution defines
  std::string summary;            // one line: what it computes, its layouts
  std::vector<std::string> dims;  // the dimensions every shape gives, in order
  std::vector<ParameterSpec> parameters;
  std::vector<TensorSpec> tensors;  // inputs, outputs, workspace
  std::vector<ScalarSpec> scalars;
  // The entry point's arguments in order, each a tensor's or a scalar's name; the stream follows them. The
  // entry point returns int.
  std::vector<std::string> arguments;
  std::optional<WorkspaceSpec> workspace;
  // Quantities the shapes and scalars use beside the dimensions, each an integer expression over the
  // dimensions and the earlier ones (a paged cache's pages per sequence): {"max_pages", "(L + page - 1) /
  // page"}.
  std::vector<std::pair<std::string, std::string>> derived;
  std::vector<ShapeRule> shape_rules;
  // FLOPs of one call: an integer expression over the dimensions and the parameters.
  std::string flops;
  // Bytes one call must read at least once (the time stage's physics floor): an integer expression, or "" for
  // the sum of the inputs' sizes.
  std::string bytes;
  std::vector<BaselineSpec> baselines;  // the first is the default of the task generator
  std::vector<MismatchHint> hints;

  const TensorSpec* tensor(const std::string& name) const;
  const ScalarSpec* scalar(const std::string& name) const;
  const BaselineSpec* baseline(const std::string& name) const;
  std::vector<const TensorSpec*> with_role(Role role) const;
  // Every C symbol a solution's library must define: the entry point, then the workspace function.
  std::vector<std::string> symbols() const;
};

const std::vector<Family>& all_families();
const Family* find_family(const std::string& name);

// ---- Values: a shape's dimensions and a task's parameters, as the expressions read them.

using Values = std::map<std::string, int64_t>;
// A shape's dimensions, the parameters (0 or 1) and the family's derived quantities; throws
// std::invalid_argument when a derived one cannot be computed (an overflow).
Values values_of(const Family& family, const std::map<std::string, int64_t>& dims,
                 const std::map<std::string, bool>& parameters);

// Integer expressions: + - * / % and parentheses, comparisons (== != < <= > >=), && || !, integers and names;
// 64-bit and checked (an overflow, a division by zero or an unknown name throws std::invalid_argument).
int64_t evaluate_expression(const std::string& expression, const Values& values);
// The same over reals, with sqrt() and log() (natural): a float scalar's value, a hint's ratio.
double evaluate_real(const std::string& expression, const Values& values);

// The elements of `tensor` at these values (not for a workspace); throws std::invalid_argument on overflow.
int64_t elements(const TensorSpec& tensor, const Values& values);
// What is wrong with a shape of `family` ("" when nothing): the shape rules, every tensor's bytes counted at
// 4 per element (the runner's fp32 references) within 64 bits, and every integer scalar within the int the
// entry point takes.
std::string check_shape(const Family& family, const Values& values);

// The value of the integer scalar `name` at these values (its expression: "page" for page_size); throws
// std::logic_error when the family has no integer scalar of that name.
int64_t integer_scalar(const Family& family, const std::string& name, const Values& values);

// ---- Derived artefacts.

// The C type of the entry point's argument `name`: "const __nv_bfloat16*" for an input, "float*" for an fp32
// output, "void*" for a workspace, "int" or "float" for a scalar. Throws std::logic_error for another name.
std::string c_type(const Family& family, const std::string& name);
// The C declarations of the entry point (and the workspace function), as include/ptxbench/abi.h has them.
std::string c_declarations(const Family& family);
// The same as Python functions on torch tensors (docs/triton-abi.md).
std::string python_signatures(const Family& family);
// The argument kinds of the entry point in order, one letter each: 't' a tensor, 'i' an int, 'f' a float
// (the stream, last, is not listed). The solution worker and the Python host call by it.
std::string argument_codes(const Family& family);

}  // namespace ptxbench
