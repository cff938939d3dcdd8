// Package testutil holds the small helpers many packages' tests share:
// a buffer one goroutine writes while another reads, and hex test vectors
// written with spaces and comments. It is imported by tests only.
package testutil

import (
	"bytes"
	"encoding/hex"
	"strings"
	"sync"
	"testing"
)

// SyncBuffer collects output written by one goroutine (or process) and
// read by another: servers' logs, a firmware's console.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Unhex decodes a test vector written as hex with spaces, newlines and
// // comments; bad hex fails the test.
func Unhex(t testing.TB, s string) []byte {
	t.Helper()
	var clean strings.Builder
	for _, line := range strings.Split(s, "\n") {
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		clean.WriteString(strings.Join(strings.Fields(line), ""))
	}
	b, err := hex.DecodeString(clean.String())
	if err != nil {
		t.Fatal(err)
	}
	return b
}
