// The entry points of the BLAS routines libtilekit_blas forwards (forward.list, one TK_STUB line
// each in the generated forward_stubs.inc). An entry point jumps to its routine in the system
// BLAS through a table entry, so the caller's registers and stack reach the routine as they were:
// no prototype is needed, and none can be wrong. An empty entry (the first call) goes through
// tilekit_blas_forward_slow, which saves the argument registers, asks
// tilekit_blas_forward_resolve (system_blas.cpp) for the address, restores them and jumps.

  .text

.macro TK_STUB name, index
  .globl \name
  .type \name, @function
  .p2align 4
\name:
  endbr64
  movq tilekit_blas_forward_table+8*\index(%rip), %r11
  testq %r11, %r11
  jz 1f
  jmp *%r11
1:
  movl $\index, %r11d
  jmp tilekit_blas_forward_slow
  .size \name, .-\name
.endm

#include "forward_stubs.inc"

// Entered by a jump from an entry point, so the stack is as the caller left it (rsp = 8 mod 16).
// Saved: the integer argument registers, rax (the vector-register count of a variadic call) and
// xmm0-7; 184 bytes keep rsp 16-byte aligned at the call.
  .p2align 4
  .hidden tilekit_blas_forward_slow
  .type tilekit_blas_forward_slow, @function
tilekit_blas_forward_slow:
  .cfi_startproc
  subq $184, %rsp
  .cfi_adjust_cfa_offset 184
  movdqu %xmm0, 0(%rsp)
  movdqu %xmm1, 16(%rsp)
  movdqu %xmm2, 32(%rsp)
  movdqu %xmm3, 48(%rsp)
  movdqu %xmm4, 64(%rsp)
  movdqu %xmm5, 80(%rsp)
  movdqu %xmm6, 96(%rsp)
  movdqu %xmm7, 112(%rsp)
  movq %rdi, 128(%rsp)
  movq %rsi, 136(%rsp)
  movq %rdx, 144(%rsp)
  movq %rcx, 152(%rsp)
  movq %r8, 160(%rsp)
  movq %r9, 168(%rsp)
  movq %rax, 176(%rsp)
  movl %r11d, %edi
  call tilekit_blas_forward_resolve
  movq %rax, %r11
  movdqu 0(%rsp), %xmm0
  movdqu 16(%rsp), %xmm1
  movdqu 32(%rsp), %xmm2
  movdqu 48(%rsp), %xmm3
  movdqu 64(%rsp), %xmm4
  movdqu 80(%rsp), %xmm5
  movdqu 96(%rsp), %xmm6
  movdqu 112(%rsp), %xmm7
  movq 128(%rsp), %rdi
  movq 136(%rsp), %rsi
  movq 144(%rsp), %rdx
  movq 152(%rsp), %rcx
  movq 160(%rsp), %r8
  movq 168(%rsp), %r9
  movq 176(%rsp), %rax
  addq $184, %rsp
  .cfi_adjust_cfa_offset -184
  jmp *%r11
  .cfi_endproc
  .size tilekit_blas_forward_slow, .-tilekit_blas_forward_slow

  .section .note.GNU-stack, "", @progbits
