//go:build !purego

#include "textflag.h"
#include "funcdata.h"

// func Grow()
// A frame of Size bytes that is never touched: the prologue's stack check
// grows the stack to fit it, nothing is zeroed.
TEXT ·Grow(SB), 0, $8192-0
	NO_LOCAL_POINTERS
	RET
