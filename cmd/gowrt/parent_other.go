//go:build !linux

package main

import "os/exec"

// dieWithParent is Linux's parent-death signal; elsewhere a child outlives
// a gowrt killed outright.
func dieWithParent(cmd *exec.Cmd) {}
