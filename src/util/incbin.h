// A file's bytes in the binary, inlined at build time with the assembler's .incbin: PTXBENCH_INCBIN(name,
// path) defines `name` (the first byte) and `name_end` (one past the last, where a NUL follows). The build
// names the path (CMakeLists.txt) and makes the object depend on the file.
#pragma once

// The directives read best as they are laid out here.
// clang-format off
#define PTXBENCH_INCBIN(name, file)                                                                 \
  __asm__(".section .rodata\n.balign 16\n.global " #name "\n.type " #name ", @object\n" #name ":\n" \
          ".incbin \"" file "\"\n.global " #name "_end\n" #name "_end:\n.byte 0\n.previous\n");     \
  extern "C" const char name[];                                                                     \
  extern "C" const char name##_end[];
// clang-format on
