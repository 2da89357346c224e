// Taking the code out of a model's reply: the last fenced block in the track's language (or with none).
#pragma once

#include <string>

#include "track/track.h"

namespace ptxbench::agent {

struct Extraction {
  bool found = false;
  std::string code;           // the block's content, without the fences
  std::string language;       // the fence's info string: "cuda", "cpp", "python", "" ...
  bool unterminated = false;  // the reply ended inside the block (cut off?): the code runs to the end
  int blocks = 0;             // code blocks seen in the reply (of any language)
  std::string problem;        // when !found: what to tell the model
};

// Fences are lines starting with ``` (or ~~~), up to three spaces indented; a block closes at a line of at
// least as many of the same characters. The last block whose language the track takes (Track::takes_fence:
// for CUDA cuda, cu, cuh, cpp, c++, cxx, cc, c, h, hpp or none; for Triton python, py, python3, triton or
// none) is taken, a labelled one before an unlabelled one. A last block left open at the end of the reply is
// taken too (marked unterminated): a reply cut off at the token limit is then judged as it is, and the
// compiler says where it stops. A block over kMaxSolutionBytes (eval/evaluate.h) is not taken: the problem
// names the limit.
Extraction extract_code(const Track& track, const std::string& reply);

}  // namespace ptxbench::agent
