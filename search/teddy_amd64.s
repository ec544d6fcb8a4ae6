#include "textflag.h"

DATA teddyNibble<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL teddyNibble<>(SB), RODATA|NOPTR, $8

// LOOKUP sets dst to the bucket sets of 32 bytes at src by one
// fingerprint byte's nibble tables lo and hi (Y15: 0x0f in every byte);
// tmp is clobbered. VPSRLW shifts words: the neighbour byte's bits that
// enter the high nibble are cleared by the mask.
#define LOOKUP(src, lo, hi, dst, tmp) \
	VMOVDQU src, dst \
	VPSRLW  $4, dst, tmp \
	VPAND   Y15, dst, dst \
	VPAND   Y15, tmp, tmp \
	VPSHUFB dst, lo, dst \
	VPSHUFB tmp, hi, tmp \
	VPAND   tmp, dst, dst

#define FP1(a, dst) \
	LOOKUP(a, Y1, Y2, dst, Y8)

#define FP2(a, b, dst) \
	LOOKUP(a, Y1, Y2, dst, Y8) \
	LOOKUP(b, Y3, Y4, Y9, Y8) \
	VPAND Y9, dst, dst

#define FP3(a, b, c, dst) \
	LOOKUP(a, Y1, Y2, dst, Y8) \
	LOOKUP(b, Y3, Y4, Y9, Y8) \
	VPAND Y9, dst, dst \
	LOOKUP(c, Y5, Y6, Y9, Y8) \
	VPAND Y9, dst, dst

// STORE writes the block of bucket sets in reg, at R10+off, to slot R13
// of the batch at DI (a teddyBatch: sets at 0, at at 256, mask at 320;
// TestTeddyBatchLayout checks them) and counts it when
// it holds a candidate: without a branch, which blocks of dense
// candidates would mispredict (Y12 is zero, Y13 clobbered).
#define STORE(reg, off) \
	MOVQ      R13, R14 \
	SHLQ      $5, R14 \
	VMOVDQU   reg, (DI)(R14*1) \
	LEAQ      off(R10), R14 \
	MOVQ      R14, 256(DI)(R13*8) \
	VPCMPEQB  Y12, reg, Y13 \
	VPMOVMSKB Y13, AX \
	NOTL      AX \
	MOVL      AX, 320(DI)(R13*4) \
	NEGL      AX \
	ADCQ      $0, R13

// func teddyBlocks(b []byte, n int, tables *[6][16]byte, m int, out *teddyBatch) (count, next int)
// AVX2: 64 positions per step while they last, then one step of 32; n is
// a multiple of 32, 1 <= m <= 3 and n+m-1 <= len(b).
TEXT ·teddyBlocks(SB), NOSPLIT, $0-72
	MOVQ b_base+0(FP), SI
	MOVQ n+24(FP), CX
	MOVQ tables+32(FP), R8
	MOVQ m+40(FP), DX
	MOVQ out+48(FP), DI
	// Broadcast from memory: no legacy SSE instruction once a Y register
	// is dirty (see indexPairBlocks).
	VPBROADCASTB   teddyNibble<>(SB), Y15
	VBROADCASTI128 0(R8), Y1
	VBROADCASTI128 16(R8), Y2
	VBROADCASTI128 32(R8), Y3
	VBROADCASTI128 48(R8), Y4
	VBROADCASTI128 64(R8), Y5
	VBROADCASTI128 80(R8), Y6
	VPXOR Y12, Y12, Y12
	XORQ  R10, R10
	XORQ  R13, R13
	MOVQ  CX, R12
	ANDQ  $~63, R12
	CMPQ  DX, $2
	JA    m3_64
	JE    m2_64

m1_64:
	CMPQ   R10, R12
	JAE    m1_32
	FP1((SI)(R10*1), Y7)
	FP1(32(SI)(R10*1), Y10)
	VPOR   Y7, Y10, Y11
	VPTEST Y11, Y11
	JNZ    m1_found64
	ADDQ   $64, R10
	JMP    m1_64

m1_found64:
	STORE(Y7, 0)
	CMPQ R13, $8
	JEQ  full32
	STORE(Y10, 32)
	CMPQ R13, $8
	JEQ  full64
	ADDQ $64, R10
	JMP  m1_64

m1_32:
	CMPQ   R10, CX
	JAE    done
	FP1((SI)(R10*1), Y7)
	VPTEST Y7, Y7
	JZ     m1_next32
	STORE(Y7, 0)
	CMPQ   R13, $8
	JEQ    full32

m1_next32:
	ADDQ $32, R10
	JMP  m1_32

m2_64:
	CMPQ   R10, R12
	JAE    m2_32
	FP2((SI)(R10*1), 1(SI)(R10*1), Y7)
	FP2(32(SI)(R10*1), 33(SI)(R10*1), Y10)
	VPOR   Y7, Y10, Y11
	VPTEST Y11, Y11
	JNZ    m2_found64
	ADDQ   $64, R10
	JMP    m2_64

m2_found64:
	STORE(Y7, 0)
	CMPQ R13, $8
	JEQ  full32
	STORE(Y10, 32)
	CMPQ R13, $8
	JEQ  full64
	ADDQ $64, R10
	JMP  m2_64

m2_32:
	CMPQ   R10, CX
	JAE    done
	FP2((SI)(R10*1), 1(SI)(R10*1), Y7)
	VPTEST Y7, Y7
	JZ     m2_next32
	STORE(Y7, 0)
	CMPQ   R13, $8
	JEQ    full32

m2_next32:
	ADDQ $32, R10
	JMP  m2_32

m3_64:
	CMPQ   R10, R12
	JAE    m3_32
	FP3((SI)(R10*1), 1(SI)(R10*1), 2(SI)(R10*1), Y7)
	FP3(32(SI)(R10*1), 33(SI)(R10*1), 34(SI)(R10*1), Y10)
	VPOR   Y7, Y10, Y11
	VPTEST Y11, Y11
	JNZ    m3_found64
	ADDQ   $64, R10
	JMP    m3_64

m3_found64:
	STORE(Y7, 0)
	CMPQ R13, $8
	JEQ  full32
	STORE(Y10, 32)
	CMPQ R13, $8
	JEQ  full64
	ADDQ $64, R10
	JMP  m3_64

m3_32:
	CMPQ   R10, CX
	JAE    done
	FP3((SI)(R10*1), 1(SI)(R10*1), 2(SI)(R10*1), Y7)
	VPTEST Y7, Y7
	JZ     m3_next32
	STORE(Y7, 0)
	CMPQ   R13, $8
	JEQ    full32

m3_next32:
	ADDQ $32, R10
	JMP  m3_32

full64:
	// The batch is full: the scan resumes after the last block stored.
	ADDQ $64, R10
	JMP  done

full32:
	ADDQ $32, R10

done:
	MOVQ R13, count+56(FP)
	MOVQ R10, next+64(FP)
	VZEROUPPER
	RET
