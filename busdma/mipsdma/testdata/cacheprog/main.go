// cacheprog runs mipsdma's cache maintenance on bare metal: it reads the
// line size from Config1 and executes every Hit_* loop over heap memory, so
// an encoding error (Reserved Instruction) or a bad loop bound (address
// error) fails the boot test.
package main

import (
	"errors"
	"fmt"
	"os"

	_ "github.com/gowrt/gowrt/board/malta"
	"github.com/gowrt/gowrt/busdma"
	"github.com/gowrt/gowrt/busdma/mipsdma"
)

type noPhys struct{}

func (noPhys) Translate(uintptr, int) (uint64, int, error) { return 0, 0, errors.New("no translation") }
func (noPhys) AllocPhys(int, int) (uint64, error)          { return 0, errors.New("no allocation") }

func main() {
	p, err := mipsdma.New(noPhys{})
	if err != nil {
		fmt.Println("mipsdma:", err)
		os.Exit(1)
	}
	buf := make([]byte, 4096+3)
	for i := range buf {
		buf[i] = byte(i)
	}
	for _, op := range []busdma.CacheOp{busdma.Writeback, busdma.WritebackInvalidate, busdma.Invalidate} {
		if err := p.Cache(op, buf[3:]); err != nil {
			fmt.Println("mipsdma:", err)
			os.Exit(1)
		}
	}
	for i := range buf {
		if buf[i] != byte(i) {
			fmt.Println("mipsdma: data changed at", i)
			os.Exit(1)
		}
	}
	fmt.Printf("mipsdma: line %d, cache ops ok\n", p.LineSize())
}
