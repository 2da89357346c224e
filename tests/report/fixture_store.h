// A small store of two agent runs whose report numbers are computed by hand in tests/unit/test_report.cpp
// (and drawn in tests/browser: every chart has data). Runs, trajectories and turns:
//
// run 1: model m1, knowledge contracts, 4 turns, 3 samples of gemm-bf16-n4096-k4096-sm90a, finished
//   #1  compile | verified 0.8x | verified 1.2x | numerical
//   #2  verified 0.5x | verified 0.9x | instruction | extraction (no code)
//   #3  extraction | compile | numerical | instruction
// run 2: model m2, knowledge contracts, 2 turns, 2 samples, stopping when verified
//   #1  verified 1.5x (solved)
//   #2  compile | numerical
//
// Turn n's usage: input 1000n, output 100n, reasoning 50n tokens, latency 2n s. A verdict's stages took: compile
// 2 s, static 0.1 s, sanitize 1 s, correct 3 s, instructions 4 s, time 5 s; a failed compile 1 s. Host "NVIDIA
// H200 (sm_90)".
#pragma once

#include <filesystem>

namespace ptxbench::report_fixture {

void write_fixture_store(const std::filesystem::path& database);

// Two runs of model m1 on the same task, one per track: cuda (2 samples: verified 1.1x in turn 1; correct
// fails, then verified 0.7x) and triton (2 samples: verified 0.9x in turn 1; instructions fails twice).
void write_two_track_store(const std::filesystem::path& database);

// The knowledge ablation and the tracks: model m1, 3 turns, 2 samples per run, stored in the order
//   cuda contracts:  #1 verified 1.4x | verified 1.6x | verified 1.6x   #2 compile | numerical | verified 1.0x
//   cuda templates:  #1 compile | compile | numerical                    #2 compile | numerical | instruction
//   cuda params:     #1 extraction | compile | compile                   #2 compile | compile | compile
//   triton contracts: #1 numerical | verified 0.9x | verified 1.1x       #2 compile | compile | instruction
// Correct within 1, 2, 3 turns: contracts 1, 1, 2 of 2; templates 0, 0, 1; params 0, 0, 0; triton 0, 1, 2.
// Verified within 1, 2, 3 turns: contracts 1, 1, 2; templates 0, 0, 0; params 0, 0, 0; triton 0, 1, 1.
void write_ablation_store(const std::filesystem::path& database);

// One model's two runs on one task, alike but for the context policy (compact, full).
void write_two_context_store(const std::filesystem::path& database);

}  // namespace ptxbench::report_fixture
