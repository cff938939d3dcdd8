//go:build !mips && !mipsle

package main

// handlerProfile needs malta's RTC: nothing elsewhere.
func handlerProfile() ([]byte, error) { return nil, nil }
