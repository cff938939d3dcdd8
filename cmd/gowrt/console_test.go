package main

import (
	"bufio"
	"os"
	"testing"
	"time"
)

// TestConsoleWaiting: the echo loop counts as waiting only while it is in
// Read and the pipe holds nothing unread (FIONREAD).
func TestConsoleWaiting(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	c := &consoleReader{r: pr}
	if c.waiting() {
		t.Fatal("waiting before the echo loop reads")
	}
	c.inRead.Store(true) // as while the echo loop is blocked in Read
	if !c.waiting() {
		t.Fatal("not waiting on an empty pipe")
	}
	if _, err := pw.Write([]byte("one\n")); err != nil {
		t.Fatal(err)
	}
	if c.waiting() {
		t.Fatal("waiting with a line in the pipe")
	}
	buf := make([]byte, 16)
	if n, err := pr.Read(buf); err != nil || n != 4 {
		t.Fatalf("draining the pipe: %d, %v", n, err)
	}
	if !c.waiting() {
		t.Fatal("not waiting once the pipe is empty again")
	}
}

// TestConsoleCaughtUp: the page announcement's wait (caughtUp) holds while
// the echo loop holds console lines it has not printed, and ends once
// every line is echoed.
func TestConsoleCaughtUp(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	c := &consoleReader{r: pr}
	release := make(chan struct{})
	echoed := make(chan string, 8)
	go func() {
		sc := bufio.NewScanner(c)
		for sc.Scan() {
			<-release // the echo loop busy printing
			echoed <- sc.Text()
		}
		close(echoed)
	}()
	waitCaughtUp := func(what string) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); !c.caughtUp(); {
			if time.Now().After(deadline) {
				t.Fatalf("not caught up %s", what)
			}
		}
	}
	waitCaughtUp("with nothing written")
	if _, err := pw.Write([]byte("one\ntwo\n")); err != nil {
		t.Fatal(err)
	}
	// Once the scanner has both lines (the pipe empty, the loop out of
	// Read and holding the first), the wait must hold.
	for deadline := time.Now().Add(5 * time.Second); c.reads.Load() < 1 || c.inRead.Load(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the scanner did not read the lines")
		}
	}
	if c.caughtUp() {
		t.Fatal("caught up with two lines not echoed")
	}
	release <- struct{}{}
	release <- struct{}{}
	if a, b := <-echoed, <-echoed; a != "one" || b != "two" {
		t.Fatalf("echoed %q, %q", a, b)
	}
	waitCaughtUp("after both lines were echoed")
	pw.Close()
}
