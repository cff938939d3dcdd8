//go:build arm

#include "textflag.h"

// ARMv7-A: DMB orders, DSB additionally waits for completion, ISB flushes
// the pipeline (ARM Architecture Reference Manual ARMv7-A, A3.8.3).
TEXT ·full(SB),NOSPLIT|NOFRAME,$0-0
	DMB	MB_ISH
	WORD	$0xf57ff04f	// DSB SY (A1 encoding; the Go arm assembler has no DSB)
	RET

TEXT ·read(SB),NOSPLIT|NOFRAME,$0-0
	DMB	MB_ISH
	RET

TEXT ·write(SB),NOSPLIT|NOFRAME,$0-0
	DMB	MB_ISHST
	RET

TEXT ·hazard(SB),NOSPLIT|NOFRAME,$0-0
	WORD	$0xf57ff06f	// ISB SY
	RET
