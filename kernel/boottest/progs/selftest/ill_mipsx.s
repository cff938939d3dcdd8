//go:build mips || mipsle

#include "textflag.h"

// func illegal(): a reserved instruction (SPECIAL, function 0x3f) inside Go
// code, so the runtime may turn the SIGILL into a panic.
TEXT ·illegal(SB),NOSPLIT,$0-0
	WORD	$0x0000003f
	RET
