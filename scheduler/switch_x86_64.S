/*
 * stvm__switch_asm(void **save_sp, void *new_sp): save the callee-saved registers
 * (System V x86-64: rbx, rbp, r12-r15) on the current stack, store the stack pointer in
 * *save_sp, load new_sp and restore the same set. Nothing else needs saving: the switch
 * is an ordinary call, so the caller has already spilled what a callee may clobber.
 *
 * MXCSR and the x87 control word (rounding modes, exception masks) are per thread by
 * default, shared by all processes: saving and reloading them costs about a third of
 * the switch. Build with -DSTVM_SWITCH_SAVE_FPU to give each process its own.
 */
#ifdef STVM_SWITCH_SAVE_FPU
#define FPU_SAVE subq $8, %rsp; stmxcsr (%rsp); fnstcw 4(%rsp)
#define FPU_LOAD ldmxcsr (%rsp); fldcw 4(%rsp); addq $8, %rsp
#define FPU_INIT_SLOTS 1
#else
#define FPU_SAVE
#define FPU_LOAD
#define FPU_INIT_SLOTS 0
#endif

    .text
    .globl stvm__switch_asm
    .hidden stvm__switch_asm
    .type stvm__switch_asm, @function
stvm__switch_asm:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    FPU_SAVE
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    FPU_LOAD
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size stvm__switch_asm, .-stvm__switch_asm

/* First return address of a new stack: call entry (r12) with its argument (rbx). Its
 * unwind entry says the return address is undefined: the outermost frame, where a
 * debugger's backtrace of a process ends (docs/debugging.md), as at glibc's _start. */
    .globl stvm__trampoline_asm
    .hidden stvm__trampoline_asm
    .type stvm__trampoline_asm, @function
stvm__trampoline_asm:
    .cfi_startproc
    .cfi_undefined rip
    movq %rbx, %rdi
    callq *%r12
    ud2
    .cfi_endproc
    .size stvm__trampoline_asm, .-stvm__trampoline_asm

    .section .note.GNU-stack,"",@progbits
