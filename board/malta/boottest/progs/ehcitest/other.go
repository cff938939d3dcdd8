//go:build !mips && !mipsle

// Command ehcitest only does something on bare-metal MIPS (see main.go).
package main

func main() {}
