package sshd

import (
	"runtime"
	"testing"

	"golang.org/x/crypto/ssh"
)

// TestMemoryPerSession measures the heap that logged-in idle shell
// sessions hold on both ends of the loopback (the server's share is
// about half) and bounds it: a 16 MiB router serves a few of them.
func TestMemoryPerSession(t *testing.T) {
	f := startServer(t, nil)
	const n = 8
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapInuse
	}
	before := heap()
	var clients []*ssh.Client
	for range n {
		c := f.login(t)
		s, err := c.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.StdinPipe(); err != nil { // held open: the shell waits at its prompt
			t.Fatal(err)
		}
		if err := s.Shell(); err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
	}
	per := (heap() - min(before, heap())) / n
	t.Logf("heap per idle shell session, client and server together: %d KiB", per>>10)
	if per > 512<<10 {
		t.Fatalf("%d KiB per session", per>>10)
	}
	runtime.KeepAlive(clients)
}
