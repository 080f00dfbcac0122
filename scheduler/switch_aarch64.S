/*
 * stvm__switch_asm(void **save_sp, void *new_sp), AAPCS64: save the callee-saved
 * registers (x19-x28, the frame pointer x29, the link register x30, and the low halves
 * d8-d15 of v8-v15) in a 160-byte block on the current stack, store the stack pointer
 * in *save_sp, load new_sp and restore the same set from the block found there, then
 * return through the restored x30. Nothing else needs saving: the switch is an
 * ordinary call, so the caller has already spilled what a callee may clobber (x0-x18,
 * the upper halves of v8-v15 and all of v0-v7, v16-v31).
 *
 * The block, from the saved stack pointer up (sp stays 16-byte aligned throughout):
 *   [sp +   0] x19, x20     [sp +  48] x25, x26     [sp +  96] d8,  d9
 *   [sp +  16] x21, x22     [sp +  64] x27, x28     [sp + 112] d10, d11
 *   [sp +  32] x23, x24     [sp +  80] x29, x30     [sp + 128] d12, d13
 *                                                   [sp + 144] d14, d15
 * scheduler/context.c (first_frame) writes the same block for a new process, with
 * x19 = the argument, x20 = the entry, x29 = 0 and x30 = stvm__trampoline_asm.
 *
 * FPCR (rounding mode, flush-to-zero, trap enables) is per thread, shared by all
 * processes, as MXCSR is on x86-64. Build with -DSTVM_SWITCH_SAVE_FPU to give each
 * process its own: FPCR then sits in a 16-byte slot below the block (a new process gets
 * 0, Linux's default). FPSR, the sticky exception flags, is left shared in both builds,
 * as MXCSR's flags are not split out either: no process can rely on them across a wait.
 *
 * BTI and PAC: not used. Both functions are reached by direct calls and returns only
 * (the trampoline by the switch's `ret`, which BTI does not check), and the switch
 * neither signs nor authenticates x30: each C frame signs and checks its own return
 * address on its own stack. The object carries no GNU property note, so a program
 * linked with -mbranch-protection=bti gets BTI switched off (the linker warns with
 * -z force-bti); adding `bti c` landing pads and the note is what enabling it would take.
 */
#ifdef STVM_SWITCH_SAVE_FPU
#define FPU_SAVE mrs x9, fpcr; str x9, [sp, #-16]!
#define FPU_LOAD ldr x9, [sp], #16; msr fpcr, x9
#else
#define FPU_SAVE
#define FPU_LOAD
#endif

    .text
    .p2align 4
    .globl stvm__switch_asm
    .hidden stvm__switch_asm
    .type stvm__switch_asm, %function
stvm__switch_asm:
    sub sp, sp, #160
    stp x19, x20, [sp, #0]
    stp x21, x22, [sp, #16]
    stp x23, x24, [sp, #32]
    stp x25, x26, [sp, #48]
    stp x27, x28, [sp, #64]
    stp x29, x30, [sp, #80]
    stp d8, d9, [sp, #96]
    stp d10, d11, [sp, #112]
    stp d12, d13, [sp, #128]
    stp d14, d15, [sp, #144]
    FPU_SAVE
    mov x9, sp
    str x9, [x0]
    mov sp, x1
    FPU_LOAD
    ldp x19, x20, [sp, #0]
    ldp x21, x22, [sp, #16]
    ldp x23, x24, [sp, #32]
    ldp x25, x26, [sp, #48]
    ldp x27, x28, [sp, #64]
    ldp x29, x30, [sp, #80]
    ldp d8, d9, [sp, #96]
    ldp d10, d11, [sp, #112]
    ldp d12, d13, [sp, #128]
    ldp d14, d15, [sp, #144]
    add sp, sp, #160
    ret
    .size stvm__switch_asm, .-stvm__switch_asm

/* First return address of a new stack: call entry (x20) with its argument (x19). The
 * frame pointer is 0 and the unwind entry says the return address is undefined, so a
 * backtrace (a frame-pointer walk, or a debugger's: docs/debugging.md) ends here. entry
 * never returns (a finished process switches away for good); if it did, brk traps
 * (SIGTRAP) rather than run on into whatever follows. */
    .p2align 2
    .globl stvm__trampoline_asm
    .hidden stvm__trampoline_asm
    .type stvm__trampoline_asm, %function
stvm__trampoline_asm:
    .cfi_startproc
    .cfi_undefined x30
    mov x0, x19
    blr x20
    brk #0x1
    .cfi_endproc
    .size stvm__trampoline_asm, .-stvm__trampoline_asm

    .section .note.GNU-stack,"",%progbits
