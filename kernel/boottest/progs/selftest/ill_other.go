//go:build !mips && !mipsle

package main

func illegal() { panic("illegal instruction") }
