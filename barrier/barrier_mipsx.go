//go:build mips || mipsle

package barrier

// Implemented in barrier_mipsx.s.

func full()
func read()
func write()
func hazard()
