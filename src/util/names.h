// Names shared by the static and dynamic instruction checks: C++ symbol demangling and opcode prefixes.
#pragma once

#include <string>
#include <string_view>

namespace ptxbench {

// "_Z4gemmPKfPf" -> "gemm(float const*, float*)"; anything that is not a mangled name comes back unchanged.
std::string demangle(const std::string& symbol);

// True when `opcode` is `prefix` or `prefix` followed by more dot-separated modifiers, in PTX
// ("wgmma.mma_async" matches "wgmma.mma_async.sync.aligned...", "wgmma.mma" does not) and in SASS
// ("SYNCS.PHASECHK" matches "SYNCS.PHASECHK.TRANS64.TRYWAIT", "LDS" does not match "LDSM").
bool opcode_has_prefix(std::string_view opcode, std::string_view prefix);

}  // namespace ptxbench
