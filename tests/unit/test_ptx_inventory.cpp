#include <gtest/gtest.h>

#include "compile/ptx_inventory.h"
#include "util/names.h"

using namespace ptxbench;

namespace {

Task task_requiring_wgmma_and_mbarrier() {
  Task t;
  t.required = {{.name = "wgmma", .ptx = {"wgmma.mma_async"}, .sass = {"HGMMA"}, .does_the_math = true},
                {.name = "mbarrier", .ptx = {"mbarrier.try_wait"}, .sass = {"SYNCS.PHASECHK"}}};
  return t;
}

}  // namespace

TEST(PtxInventory, FindsInstructionsAfterLabelsAndPredicates) {
  const std::string ptx = R"(
.visible .entry _Z1kPf(
	.param .u64 _Z1kPf_param_0
)
.maxntid 128, 1, 1
{
	.reg .pred 	%p<2>;
	ld.param.u64 	%rd1, [_Z1kPf_param_0];
$L__BB0_1:
	@%p1 bra 	$L__BB0_3;
	// begin inline asm
	wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%f1, %f2, %f3, %f4}, %rd2, %rd3, p, 1, 1, 1, 1;
	// end inline asm
$L__BB0_3: mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], %r2;
	ret;
}
)";
  const auto inventory = take_inventory(ptx, task_requiring_wgmma_and_mbarrier());
  EXPECT_EQ(inventory.opcodes.at("wgmma.mma_async"), 1);
  EXPECT_EQ(inventory.opcodes.at("ld.param"), 1);
  EXPECT_EQ(inventory.opcodes.at("bra"), 1);
  EXPECT_EQ(inventory.opcodes.at("ret"), 1);
  EXPECT_EQ(inventory.required_counts.at("wgmma"), 1);
  EXPECT_EQ(inventory.required_counts.at("mbarrier"), 1);
  EXPECT_TRUE(inventory.missing_families.empty());
}

TEST(PtxInventory, CommentsAndDataDoNotCount) {
  const std::string ptx = R"(
.global .align 1 .b8 $str[16] = {119, 103, 109, 109, 97, 46, 109, 109, 97, 95, 97, 115, 121, 110, 99, 0};
{
	// wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 hidden in a comment
	/* mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], %r2; */
	st.global.f32 [%rd1], %f1;
}
)";
  const auto inventory = take_inventory(ptx, task_requiring_wgmma_and_mbarrier());
  EXPECT_EQ(inventory.required_counts.at("wgmma"), 0);
  EXPECT_EQ(inventory.required_counts.at("mbarrier"), 0);
  EXPECT_EQ(inventory.missing_families, (std::vector<std::string>{"wgmma", "mbarrier"}));
  EXPECT_EQ(inventory.opcodes.at("st.global"), 1);
  EXPECT_EQ(inventory.opcodes.size(), 1u);
}

TEST(PtxInventory, InstructionsAfterLineDirectivesCount) {
  // -lineinfo puts .loc lines, which end without ';', right before instructions.
  const auto ops = ptx_instructions(R"(
	mov.b32 %r1, 0;
	.loc	1 122 9
	.loc	5 33 3, function_name $L__info_string8, inlined_at 1 166 9
	// begin inline asm
	cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r3}], [%r4];
	// end inline asm
	.loc	1 130 2
	@%p1 bra $L__BB0_4;
)");
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[1], "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes");
  EXPECT_EQ(ops[2], "bra");
}

TEST(PtxInventory, PrefixesMatchWholeModifiers) {
  EXPECT_TRUE(opcode_has_prefix("wgmma.mma_async.sync.aligned", "wgmma.mma_async"));
  EXPECT_TRUE(opcode_has_prefix("wgmma.fence", "wgmma.fence"));
  EXPECT_FALSE(opcode_has_prefix("wgmma.mma_async.sync", "wgmma.mma"));
  EXPECT_FALSE(opcode_has_prefix("mma.sync.aligned", "mm"));
}

TEST(PtxInventory, BulkCopiesAreKeptApart) {
  const auto ops = ptx_instructions(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, "
      "%r3}], [%r4];\n"
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1], 128, [%r4];\n"
      "cp.async.ca.shared.global [%r1], [%rd1], 16;\n");
  ASSERT_EQ(ops.size(), 3u);
  Task t;
  const auto inventory = take_inventory(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, "
      "%r3}], [%r4];"
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1], 128, [%r4];"
      "cp.async.ca.shared.global [%r1], [%rd1], 16;",
      t);
  EXPECT_EQ(inventory.opcodes.at("cp.async.bulk.tensor"), 1);
  EXPECT_EQ(inventory.opcodes.at("cp.async.bulk"), 1);
  EXPECT_EQ(inventory.opcodes.at("cp.async"), 1);
}
