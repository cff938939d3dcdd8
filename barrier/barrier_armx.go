//go:build arm || arm64

package barrier

// Implemented in barrier_arm.s / barrier_arm64.s.

func full()
func read()
func write()
func hazard()
