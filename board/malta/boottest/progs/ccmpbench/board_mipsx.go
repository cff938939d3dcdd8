//go:build mips || mipsle

package main

import _ "github.com/gowrt/gowrt/board/malta/eth"
