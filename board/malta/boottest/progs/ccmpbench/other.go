//go:build !mips && !mipsle

// Command ccmpbench only does something on bare-metal MIPS (see main.go).
package main

func main() {}
