//go:build !mips && !mipsle && !gowrt_ar71xx

package main

import _ "github.com/gowrt/gowrt/board/sim"
