// Command conlogtest checks kernel.ConsoleLog on the bare-metal kernel: what
// the program prints is in the log, reading continues where it left off,
// and output older than the ring is reported as lost, not returned garbled.
package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/gowrt/gowrt/kernel"
)

func fail(format string, a ...any) {
	fmt.Printf("conlogtest: FAIL "+format+"\n", a...)
	os.Exit(1)
}

// readAll reads the log from pos to its end.
func readAll(pos uint32) (log []byte, first, next uint32) {
	buf := make([]byte, 1000) // several calls per read: continuation is exercised
	first = pos
	for i := 0; ; i++ {
		n, start, err := kernel.ConsoleLog(buf, pos)
		if err != nil {
			fail("ConsoleLog: %v", err)
		}
		if i == 0 {
			first = start
		} else if start != pos {
			fail("continuing at %d, the kernel started at %d", pos, start)
		}
		if n == 0 {
			return log, first, pos
		}
		log = append(log, buf[:n]...)
		pos = start + uint32(n)
	}
}

func main() {
	fmt.Println("conlogtest: marker one")
	log, first, next := readAll(0)
	if first != 0 || !bytes.Contains(log, []byte("conlogtest: marker one\n")) {
		fail("log from 0 starts at %d and lacks the first marker: %q", first, log)
	}
	fmt.Fprintln(os.Stderr, "conlogtest: marker two (stderr)")
	log, first, _ = readAll(next)
	if first != next || string(log) != "conlogtest: marker two (stderr)\n" {
		fail("log from %d (started %d): %q", next, first, log)
	}
	// 20 KiB more than the 16 KiB ring: the oldest is gone, what is kept is
	// the newest output, intact.
	line := strings.Repeat("x", 99) + "\n"
	for i := 0; i < 200; i++ {
		fmt.Print(line)
	}
	log, first, next = readAll(0)
	if first == 0 || len(log) != 16<<10 || next-first != 16<<10 {
		fail("after 20 KiB: log from 0 started at %d, %d bytes, end %d", first, len(log), next)
	}
	if !bytes.HasSuffix(log, []byte(line+line)) {
		fail("the ring's end is not the last output")
	}
	if _, _, err := kernel.ConsoleLog(make([]byte, 8), 0); err != nil {
		fail("ConsoleLog: %v", err)
	}
	fmt.Println("conlogtest: ok")
}
