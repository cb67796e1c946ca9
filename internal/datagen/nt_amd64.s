#include "textflag.h"

// WORD stores the stream's word at counter SI (key BX) at off(DI), and
// steps the counter by R9: AX = lo^hi of SI * (SI^BX).
#define WORD(off) \
	MOVQ SI, AX; \
	MOVQ SI, R8; \
	XORQ BX, R8; \
	MULQ R8; \
	XORQ DX, AX; \
	MOVNTIQ AX, off(DI); \
	ADDQ R9, SI

// func wordsNT(p *byte, n int, x, b uint64)
//
// Stores n (a multiple of 4, at least 4) words of the stream from counter
// x on into p, with MOVNTI: non-temporal stores that write whole cache lines
// through the write-combining buffers instead of reading each line into the
// cache first. SFENCE orders them before whatever the caller does next
// (handing p to a device).
TEXT ·wordsNT(SB), NOSPLIT, $0-32
	MOVQ p+0(FP), DI
	MOVQ n+8(FP), CX
	MOVQ x+16(FP), SI
	MOVQ b+24(FP), BX
	MOVQ $0xa0761d6478bd642f, R9
	SHRQ $2, CX

loop:
	WORD(0)
	WORD(8)
	WORD(16)
	WORD(24)
	ADDQ $32, DI
	DECQ CX
	JNZ  loop
	SFENCE
	RET
