//go:build mips || mipsle

package malta

import (
	"fmt"

	"github.com/gowrt/gowrt/intr"
	"github.com/gowrt/gowrt/intr/kernelirq"
	soc "github.com/gowrt/gowrt/soc/malta"
)

// PIC is the PIIX4 i8259 pair as an intr.Controller (intr/kernelirq: the
// kernel owns the chips, takes each interrupt in trap context with an
// OCW3 poll, masks the line and sends the EOI at once). An edge that
// arrives while the line is masked is latched in the i8259's request
// register and delivered on unmask. The cascade and COM1 (the console)
// are the kernel's.
var PIC = &kernelirq.Controller{
	ControllerName: "i8259",
	NumLines:       soc.NumIRQ,
	Reserved:       1<<soc.IRQCascade | 1<<soc.IRQCOM1,
	Trigger:        picTrigger,
}

// picTrigger: the ELCR programs any line but IRQ 0, 1, 2, 8 and 13, which
// are edge-only.
func picTrigger(line int, t intr.Trigger) error {
	if t == intr.Level && (line <= 2 || line == 8 || line == 13) {
		return fmt.Errorf("%w: i8259 line %d is edge-only", intr.ErrTrigger, line)
	}
	return nil
}

// NewDispatcher returns an intr.Dispatcher for the i8259 pair.
func NewDispatcher() *intr.Dispatcher { return kernelirq.NewDispatcher(PIC) }
