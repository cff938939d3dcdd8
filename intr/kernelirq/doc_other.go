//go:build !mips && !mipsle

// Package kernelirq is the gowrt kernel's root interrupt controller as
// package intr sees it, for bare-metal boards (mips and mipsle builds
// only: it is made of kernel calls).
package kernelirq
