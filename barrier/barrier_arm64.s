//go:build arm64

#include "textflag.h"

// Option encodings (CRm): SY=15, ISH=11, ISHLD=9, ISHST=10.
TEXT ·full(SB),NOSPLIT|NOFRAME,$0-0
	DMB	$11
	DSB	$15
	RET

TEXT ·read(SB),NOSPLIT|NOFRAME,$0-0
	DMB	$9
	RET

TEXT ·write(SB),NOSPLIT|NOFRAME,$0-0
	DMB	$10
	RET

TEXT ·hazard(SB),NOSPLIT|NOFRAME,$0-0
	ISB	$15
	RET
