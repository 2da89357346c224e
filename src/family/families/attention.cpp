// Attention, forward (O and LSE) and backward (dQ, dK, dV): bf16 tensors, GQA, causal masks aligned
// bottom-right; decode over a paged KV cache; causal prefill, ragged and paged (include/ptxbench/abi.h).
#include "family/family.h"

namespace ptxbench {
namespace {

const char* kLayout =
    "Q [B,Sq,Hq,D], K and V [B,Sk,Hkv,D], O like Q, bf16; LSE [B,Hq,Sq] fp32 = natural log of the row sum of "
    "exp(scale*q.k) over visible keys; scale = 1/sqrt(D); query head h uses KV head h/(Hq/Hkv); causal: "
    "query i "
    "sees key j iff j <= i + (Sk - Sq) (bottom-right aligned)";

// Q, K, V (and dO) ~ N(0,1): with scale = 1/sqrt(D) every score is ~ N(0,1) whatever D, so the softmax is
// neither flat nor one-hot. Outputs are compared one row per token (b, i) of heads x D values, LSE one row
// per (b, h) of Sq values: a mismatch's row and column name the token or the query row.
// The tolerances: bf16 outputs of an fp32 computation are within half an ulp (2^-9 relative) of it; 1e-2
// relative leaves room for another summation order and for P rounded to bf16 before the PV matmul, as
// FlashAttention kernels do. LSE is fp32 and O(1)-O(10): 1e-3 absolute.
TensorSpec bf16_tensor(const char* name, Role role, std::vector<std::string> shape) {
  return {.name = name,
          .role = role,
          .shape = std::move(shape),
          .row_dims = 2,
          .tolerance = {.rtol = 0.01, .atol = 0.002}};
}
TensorSpec q_like(const char* name, Role role) {
  return bf16_tensor(name, role, {"B", "Sq", "Hq", "D"});
}
TensorSpec kv_like(const char* name, Role role) {
  return bf16_tensor(name, role, {"B", "Sk", "Hkv", "D"});
}
TensorSpec lse(Role role, Fill fill = {}, std::vector<std::string> shape = {"B", "Hq", "Sq"},
               int row_dims = 2) {
  return {.name = "LSE",
          .dtype = DType::f32,
          .role = role,
          .shape = std::move(shape),
          .fill = std::move(fill),
          .row_dims = row_dims,
          .tolerance = {.rtol = 0, .atol = 0.001}};
}
// An int32 input the runner draws for each call (runner/layouts.h): a page table, lengths, offsets.
TensorSpec drawn_index(const char* name, std::vector<std::string> shape) {
  return {.name = name, .dtype = DType::i32, .shape = std::move(shape), .fill = {Fill::computed, "1"}};
}

// A paged KV cache's K_cache or V_cache, and the integers every paged entry point takes before its own (the
// batch, the heads, the head dim, the page size, the pages per sequence and in the pool).
TensorSpec cache_tensor(const char* name) {
  return bf16_tensor(name, Role::input, {"num_pages", "page", "Hkv", "D"});
}
std::vector<ScalarSpec> paged_scalars() {
  return {{ScalarSpec::integer, "B", "B"},
          {ScalarSpec::integer, "Hq", "Hq"},
          {ScalarSpec::integer, "Hkv", "Hkv"},
          {ScalarSpec::integer, "D", "D"},
          {ScalarSpec::integer, "page_size", "page"},
          {ScalarSpec::integer, "max_pages", "max_pages"},
          {ScalarSpec::integer, "num_pages", "num_pages"}};
}
// `scalars` with `more` after them.
std::vector<ScalarSpec> with(std::vector<ScalarSpec> scalars, const std::vector<ScalarSpec>& more) {
  scalars.insert(scalars.end(), more.begin(), more.end());
  return scalars;
}

std::vector<ScalarSpec> scalars() {
  std::vector<ScalarSpec> out;
  for (const char* dim : {"B", "Hq", "Hkv", "Sq", "Sk", "D"}) out.push_back({ScalarSpec::integer, dim, dim});
  out.push_back({ScalarSpec::real, "scale", "1/sqrt(D)"});
  out.push_back({ScalarSpec::integer, "causal", "causal"});
  return out;
}

// The head dims abi.h names for the dense families and the prefills: 64, 96 and 128, and 256 for the forward.
const ShapeRule kHeadDims = {"D == 64 || D == 96 || D == 128", "D must be 64, 96 or 128"};
const ShapeRule kHeadDimsTo256 = {"D == 64 || D == 96 || D == 128 || D == 256",
                                  "D must be 64, 96, 128 or 256"};

// The rules of abi.h a shape keeps: head dims the ABI names, GQA groups that divide evenly, and (causal)
// every query row sees at least one key, so that no reference value is -inf (LSE) and every compared element
// is finite.
std::vector<ShapeRule> shape_rules(const ShapeRule& head_dims) {
  return {head_dims,
          {"Hq % Hkv == 0", "Hq must be a multiple of Hkv"},
          {"!causal || Sq <= Sk",
           "a causal shape needs Sq <= Sk (else the first Sq - Sk query rows see no key)"}};
}

BaselineSpec no_baseline() {
  return {"none", "the time stage reports the time and TFLOP/s alone", ""};
}

std::vector<BaselineSpec> baselines() {
  return {{"vendor-attention",
           "cuDNN's fused attention through PyTorch (baselines/attention_cudnn.py), run by the runner in a "
           "process of its own and timed the same way",
           "baselines/attention_cudnn.py"},
          no_baseline()};
}

// `causal_when`: the parameter under which the causal mask applies ("" when it always does), or nullptr for a
// family without one.
std::vector<MismatchHint> hints(const char* causal_when) {
  std::vector<MismatchHint> out = {
      {"", "1/sqrt(D)", false, "", "1/sqrt(D): the softmax scale applied where it does not belong?"},
      {"", "sqrt(D)", false, "", "sqrt(D): the softmax scale missing?"},
      {"", "1/log(2)", false, "", "1/ln 2: a base-2 logarithm where the natural one is asked for?"},
      {"", "log(2)", false, "", "ln 2: a natural logarithm where base 2 is asked for?"}};
  if (causal_when != nullptr)
    out.push_back({"LSE", "", true, causal_when, "keys the causal mask hides were counted?"});
  return out;
}

const std::vector<ParameterSpec> kParameters = {
    {"causal", "query i sees key j only when j <= i + (Sk - Sq) (bottom-right aligned)"}};

}  // namespace

Family attention_forward_family() {
  return {
      .name = "attention-forward",
      .entry_point = "ptxbench_attention_forward_bf16",
      .summary = std::string("O = softmax(scale * Q K^T) V and LSE, fp32 accumulation; ") + kLayout,
      .dims = {"B", "Hq", "Hkv", "Sq", "Sk", "D"},
      .parameters = kParameters,
      .tensors = {q_like("Q", Role::input), kv_like("K", Role::input), kv_like("V", Role::input),
                  q_like("O", Role::output), lse(Role::output)},
      .scalars = scalars(),
      .arguments = {"Q", "K", "V", "O", "LSE", "B", "Hq", "Hkv", "Sq", "Sk", "D", "scale", "causal"},
      .workspace = std::nullopt,
      .shape_rules = shape_rules(kHeadDimsTo256),
      // QK^T and PV, 2*Sq*Sk*D each per head; half when causal. The softmax is not counted.
      .flops = "4*B*Hq*Sq*Sk*D / (1 + causal)",
      .bytes = "",
      .baselines = baselines(),
      .hints = hints("causal"),
  };
}

Family attention_backward_family() {
  return {
      .name = "attention-backward",
      .entry_point = "ptxbench_attention_backward_bf16",
      .summary =
          std::string("dQ, dK, dV of attention from Q, K, V, O, LSE and dO (dK, dV summed over the query "
                      "heads of a KV group), with a workspace the solution sizes; ") +
          kLayout,
      .dims = {"B", "Hq", "Hkv", "Sq", "Sk", "D"},
      .parameters = kParameters,
      // O and LSE are the reference forward of this Q, K, V (O rounded to bf16, as a forward kernel stores
      // it): the backward's formulas assume they belong together.
      .tensors = {q_like("Q", Role::input),
                  kv_like("K", Role::input),
                  kv_like("V", Role::input),
                  [] {
                    TensorSpec o = q_like("O", Role::input);
                    o.fill = {Fill::computed, "1"};
                    return o;
                  }(),
                  lse(Role::input, {Fill::computed, "1"}),
                  q_like("dO", Role::input),
                  q_like("dQ", Role::output),
                  kv_like("dK", Role::output),
                  kv_like("dV", Role::output),
                  {.name = "workspace", .dtype = DType::bytes, .role = Role::workspace}},
      .scalars = scalars(),
      .arguments = {"Q", "K", "V", "O", "LSE", "dO", "dQ", "dK", "dV", "workspace", "B", "Hq", "Hkv", "Sq",
                    "Sk", "D", "scale", "causal"},
      .workspace = WorkspaceSpec{.symbol = "ptxbench_attention_backward_workspace_bytes",
                                 .arguments = {"B", "Hq", "Hkv", "Sq", "Sk", "D", "causal"}},
      .shape_rules = shape_rules(kHeadDims),
      // The five matmuls of the FlashAttention-2/3 backward (S recomputed, dP, dV, dK, dQ): 2.5x the forward.
      .flops = "10*B*Hq*Sq*Sk*D / (1 + causal)",
      .bytes = "",
      .baselines = baselines(),
      .hints = hints("causal"),
  };
}

Family attention_decode_paged_family() {
  // O and LSE as the dense forward's: scores ~ N(0,1), fp32 LSE within 1e-3 absolute. The tasks' O tolerance
  // is the causal forward's (atol 0.01): a sequence of a few tokens is a causal forward's first rows
  // (docs/tasks.md).
  return {
      .name = "attention-decode-paged",
      .entry_point = "ptxbench_attention_decode_paged_bf16",
      .summary =
          "O = softmax(scale * q K^T) V and LSE for one query token per sequence over every token of its "
          "sequence, fp32 accumulation; Q and O [B,Hq,D] bf16, LSE [B,Hq] fp32; K_cache and V_cache "
          "[num_pages,page_size,Hkv,D] bf16, a pool of pages; sequence b has seq_lens[b] tokens, token t in "
          "page page_table[b][t/page_size] at row t%page_size (page_table [B,max_pages] int32, -1 past the "
          "last page); scale = 1/sqrt(D); query head h uses KV head h/(Hq/Hkv)",
      // L is the longest sequence of the batch and T the tokens of all of them: the runner draws the lengths
      // of each call (each in 1..L, one of them L, summing to T) and the pages (a random permutation of the
      // pool), so that no two calls share a layout.
      .dims = {"B", "Hq", "Hkv", "D", "page", "L", "T"},
      .parameters = {},
      .tensors = {bf16_tensor("Q", Role::input, {"B", "Hq", "D"}),
                  cache_tensor("K_cache"),
                  cache_tensor("V_cache"),
                  drawn_index("page_table", {"B", "max_pages"}),
                  drawn_index("seq_lens", {"B"}),
                  bf16_tensor("O", Role::output, {"B", "Hq", "D"}),
                  lse(Role::output, {}, {"B", "Hq"}, 1),
                  {.name = "workspace", .dtype = DType::bytes, .role = Role::workspace}},
      .scalars = with(paged_scalars(), {{ScalarSpec::real, "scale", "1/sqrt(D)"}}),
      .arguments = {"Q", "K_cache", "V_cache", "page_table", "seq_lens", "O", "LSE", "workspace", "B", "Hq",
                    "Hkv", "D", "page_size", "max_pages", "num_pages", "scale"},
      // Split-KV kernels (flash decoding) keep partial rows and their statistics between two passes.
      .workspace = WorkspaceSpec{.symbol = "ptxbench_attention_decode_paged_workspace_bytes",
                                 .arguments = {"B", "Hq", "Hkv", "D", "page_size", "max_pages", "num_pages"}},
      .derived = {{"max_pages", "(L + page - 1) / page"},
                  // Room for every sequence's pages (the sum of ceil(len/page) is at most this less B) and at
                  // least B pages that no sequence uses, whose values a kernel must not read.
                  {"num_pages", "(T + B*(page - 1)) / page + B"}},
      .shape_rules = {{"D == 64 || D == 128 || D == 256", "D must be 64, 128 or 256"},
                      {"Hq % Hkv == 0", "Hq must be a multiple of Hkv"},
                      {"T <= B*L", "T, the tokens of the batch, is at most B*L"},
                      {"T >= L + B - 1", "T must hold one sequence of L tokens and B - 1 of at least one"}},
      // q.k and p.v per token and query head.
      .flops = "4*T*Hq*D",
      // Every token's K and V row of its KV head once, and the queries; not the pool's unused pages.
      .bytes = "4*T*Hkv*D + 2*B*Hq*D",
      .baselines = {{"none",
                     "no vendor kernel of paged decode is on the GPU host (torch's SDPA has none): the time "
                     "stage reports the share of the HBM bandwidth the runner measures",
                     ""}},
      .hints = hints(nullptr),
  };
}

Family attention_prefill_ragged_family() {
  // As the dense causal forward's (attention.cpp): the same inputs, scores and tolerances, rows of a
  // sequence.
  TensorSpec o = bf16_tensor("O", Role::output, {"T", "Hq", "D"});
  o.row_dims = 1;
  return {
      .name = "attention-prefill-ragged",
      .entry_point = "ptxbench_attention_prefill_ragged_bf16",
      .summary =
          "causal self-attention of each sequence of a ragged batch packed token after token, O and LSE, "
          "fp32 accumulation; Q and O [T,Hq,D], K and V [T,Hkv,D] bf16, LSE [T,Hq] fp32; sequence b is "
          "tokens indptr[b] .. indptr[b+1]-1 (indptr [B+1] int32); token i of a sequence sees its tokens "
          "0..i; scale = 1/sqrt(D); query head h uses KV head h/(Hq/Hkv)",
      // B sequences, Bl of them of L tokens and the others of S, in an order the runner draws for each call:
      // the FLOPs are the shape's, the layout is the call's.
      .dims = {"B", "Hq", "Hkv", "D", "L", "S", "Bl"},
      .parameters = {},
      .tensors = {bf16_tensor("Q", Role::input, {"T", "Hq", "D"}),
                  bf16_tensor("K", Role::input, {"T", "Hkv", "D"}),
                  bf16_tensor("V", Role::input, {"T", "Hkv", "D"}), drawn_index("indptr", {"B + 1"}), o,
                  lse(Role::output, {}, {"T", "Hq"}, 1)},
      .scalars = {{ScalarSpec::integer, "B", "B"},
                  {ScalarSpec::integer, "Hq", "Hq"},
                  {ScalarSpec::integer, "Hkv", "Hkv"},
                  {ScalarSpec::integer, "D", "D"},
                  {ScalarSpec::integer, "max_len", "L"},
                  {ScalarSpec::integer, "total", "T"},
                  {ScalarSpec::real, "scale", "1/sqrt(D)"}},
      .arguments = {"Q", "K", "V", "indptr", "O", "LSE", "B", "Hq", "Hkv", "D", "max_len", "total", "scale"},
      .workspace = std::nullopt,
      .derived = {{"T", "Bl*L + (B - Bl)*S"}},
      .shape_rules = {kHeadDims,
                      {"Hq % Hkv == 0", "Hq must be a multiple of Hkv"},
                      {"Bl >= 1 && Bl <= B", "Bl, the sequences of L tokens, is 1 .. B"},
                      {"S <= L", "S, the length of the other sequences, is at most L"}},
      // Per sequence of n tokens, the causal forward's 4*Hq*n*n*D / 2 (QK^T and PV over the visible half).
      .flops = "2*Hq*D*(Bl*L*L + (B - Bl)*S*S)",
      .bytes = "",
      .baselines = {{"vendor-attention",
                     "FlashAttention-2's variable-length causal forward through PyTorch "
                     "(baselines/attention_cudnn.py's ragged entry point), run by the runner in a process of "
                     "its own and timed the same way",
                     "baselines/attention_cudnn.py"},
                    no_baseline()},
      .hints = hints(""),
  };
}

Family attention_prefill_paged_family() {
  // As the ragged prefill's: the dense causal forward's inputs, scores and tolerances, rows of a sequence.
  TensorSpec o = bf16_tensor("O", Role::output, {"T", "Hq", "D"});
  o.row_dims = 1;
  return {
      .name = "attention-prefill-paged",
      .entry_point = "ptxbench_attention_prefill_paged_bf16",
      .summary =
          "causal attention of each sequence's new tokens to its tokens in a paged KV cache (the earlier "
          "ones "
          "and the new ones, last), O and LSE, fp32 accumulation; Q and O [T,Hq,D] bf16 packed by qo_indptr "
          "[B+1], LSE [T,Hq] fp32; K_cache and V_cache [num_pages,page_size,Hkv,D] bf16, sequence b's token "
          "t "
          "in page page_table[b][t/page_size] at row t%page_size, kv_lens[b] tokens; new token i of n sees "
          "the "
          "tokens j <= kv_lens[b] - n + i; scale = 1/sqrt(D); query head h uses KV head h/(Hq/Hkv)",
      // B sequences, Bl of them with L new tokens and the others with S, each after a prefix of P tokens
      // already cached (a chunked prefill, or a prompt whose prefix is shared): the FLOPs are the shape's;
      // the order of the sequences and the pages they occupy are drawn for each call.
      .dims = {"B", "Hq", "Hkv", "D", "page", "L", "S", "Bl", "P"},
      .parameters = {},
      .tensors = {bf16_tensor("Q", Role::input, {"T", "Hq", "D"}), cache_tensor("K_cache"),
                  cache_tensor("V_cache"), drawn_index("qo_indptr", {"B + 1"}),
                  drawn_index("page_table", {"B", "max_pages"}), drawn_index("kv_lens", {"B"}), o,
                  lse(Role::output, {}, {"T", "Hq"}, 1)},
      .scalars = with(paged_scalars(), {{ScalarSpec::integer, "max_q_len", "L"},
                                        {ScalarSpec::integer, "total_q", "T"},
                                        {ScalarSpec::real, "scale", "1/sqrt(D)"}}),
      .arguments = {"Q", "K_cache", "V_cache", "qo_indptr", "page_table", "kv_lens", "O", "LSE", "B", "Hq",
                    "Hkv", "D", "page_size", "max_pages", "num_pages", "max_q_len", "total_q", "scale"},
      .workspace = std::nullopt,
      // T new tokens, Tk cached ones (T and the prefixes); pages as the paged decode's, with B spare.
      .derived = {{"T", "Bl*L + (B - Bl)*S"},
                  {"Tk", "T + B*P"},
                  {"max_pages", "(L + P + page - 1) / page"},
                  {"num_pages", "(Tk + B*(page - 1)) / page + B"}},
      .shape_rules = {kHeadDims,
                      {"Hq % Hkv == 0", "Hq must be a multiple of Hkv"},
                      {"Bl >= 1 && Bl <= B", "Bl, the sequences of L new tokens, is 1 .. B"},
                      {"S <= L", "S, the new tokens of the other sequences, is at most L"}},
      // Per sequence of n new tokens after a prefix of P: QK^T and PV over the prefix (4*Hq*n*P*D) and over
      // the visible half of the new tokens (the causal forward's 4*Hq*n*n*D / 2).
      .flops = "2*Hq*D*(Bl*(2*L*P + L*L) + (B - Bl)*(2*S*P + S*S))",
      .bytes = "",
      .baselines = {no_baseline()},
      .hints = hints(""),
  };
}

}  // namespace ptxbench
