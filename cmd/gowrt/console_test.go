package main

import (
	"bufio"
	"os"
	"testing"
	"time"
)

// TestConsoleCaughtUp: the page announcement's wait (caughtUp) holds while
// console lines sit in the pipe or in the echo loop's scanner, and ends
// once every line is echoed.
func TestConsoleCaughtUp(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	c := &consoleReader{r: pr}
	if c.caughtUp() {
		t.Fatal("caught up before the echo loop read anything")
	}
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
		for deadline := time.Now().Add(5 * time.Second); !c.caughtUp(); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("not caught up %s", what)
			}
		}
	}
	waitCaughtUp("with nothing written")
	if _, err := pw.Write([]byte("one\ntwo\n")); err != nil {
		t.Fatal(err)
	}
	// Unread in the pipe, or read and held by the scanner: not yet.
	for range 20 {
		if c.caughtUp() {
			t.Fatal("caught up with two lines not echoed")
		}
		time.Sleep(5 * time.Millisecond)
	}
	release <- struct{}{}
	if c.caughtUp() {
		t.Fatal("caught up with one line not echoed")
	}
	release <- struct{}{}
	if a, b := <-echoed, <-echoed; a != "one" || b != "two" {
		t.Fatalf("echoed %q, %q", a, b)
	}
	waitCaughtUp("after both lines were echoed")
	pw.Close()
}
