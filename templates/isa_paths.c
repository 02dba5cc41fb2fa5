// The CPU paths of a kernel of plain C loops (compiler/emit.c, kernel_paths), or of a run
// function's statements (emit_run). The loops, ${FN}_any, are compiled for AVX-512 and AVX2 as
// well as for the build's target, and each call takes the best path the CPU has: a plain -O2
// build, whose target is SSE2, vectorises them as wide as -march=native does. The paths run the
// same operations on each element in the same order (no contraction: templates/prologue.c), so
// the results are the same bits.
#if MLBC_X86 && MLBC_ISA_TARGET < 2
MLBC_PATH MLBC_AVX512 static ${RET} ${FN}_avx512(${PARAMS})
{
    ${RETURN}${FN}_any(${ARGS});
}
#endif
#if MLBC_X86 && MLBC_ISA_TARGET < 1
MLBC_PATH MLBC_AVX2 static ${RET} ${FN}_avx2(${PARAMS})
{
    ${RETURN}${FN}_any(${ARGS});
}
#endif
/* ${FN}_any on the CPU's best path */
${LINK}${RET} ${FN}(${PARAMS})
{
#if MLBC_X86
    const int isa = mlbc_isa();
    (void)isa;
#if MLBC_ISA_TARGET < 2
    if (isa == 2)
        ${RETURN}${FN}_avx512(${ARGS});
    else
#endif
#if MLBC_ISA_TARGET < 1
    if (isa == 1)
        ${RETURN}${FN}_avx2(${ARGS});
    else
#endif
#endif
    ${RETURN}${FN}_any(${ARGS});
}
