// Every task family: one descriptor each, under families/.
#include "family/family.h"

namespace ptxbench {

Family gemm_family();
Family attention_forward_family();
Family attention_backward_family();
Family attention_decode_paged_family();
Family attention_prefill_ragged_family();
Family attention_prefill_paged_family();

const std::vector<Family>& all_families() {
  static const std::vector<Family> families = {gemm_family(),
                                               attention_forward_family(),
                                               attention_backward_family(),
                                               attention_decode_paged_family(),
                                               attention_prefill_ragged_family(),
                                               attention_prefill_paged_family()};
  return families;
}

}  // namespace ptxbench
