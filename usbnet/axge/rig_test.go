package axge

import (
	"testing"
	"time"

	gnet "github.com/gowrt/gowrt/net"
	"github.com/gowrt/gowrt/usbnet/axge/axgesim"
	"github.com/gowrt/gowrt/usbnet/usb"
	"github.com/gowrt/gowrt/usbnet/usbsim"
)

var testMAC = [6]byte{0x02, 0xa8, 0x81, 0x79, 0x00, 0x01}

// rig is the model behind usbsim.Host, enumerated and configured by the
// USB core, with the chip layer on the core's Device.
type rig struct {
	host  *usbsim.Host
	model *axgesim.Chip
	dev   *usb.Device
	chip  *Chip
	links chan gnet.LinkState
}

// newRig builds the rig; wrap (may be nil) wraps the control device the
// chip layer is given (the tests' pre-fix variants).
func newRig(t *testing.T, mc axgesim.Config, variant Variant, wrap func(ControlDevice) ControlDevice) *rig {
	t.Helper()
	if mc.MAC == ([6]byte{}) {
		mc.MAC = testMAC
	}
	r := &rig{host: usbsim.NewHost(usbsim.HostConfig{Poll: 50 * time.Microsecond}), model: axgesim.New(mc),
		links: make(chan gnet.LinkState, 1<<16)}
	r.host.Plug(1, r.model.Function())
	var addrs usb.Addresses
	d, err := usb.Enumerate(r.host, 1, &addrs)
	if err != nil {
		r.host.Close()
		t.Fatal(err)
	}
	r.dev = d
	t.Cleanup(func() {
		d.Detach()
		r.host.Close()
	})
	if err := d.SetConfiguration(1); err != nil {
		t.Fatal(err)
	}
	var cd ControlDevice = d
	if wrap != nil {
		cd = wrap(d)
	}
	r.chip, err = NewChip(ChipConfig{Dev: cd, Variant: variant, LinkChanged: func(l gnet.LinkState) {
		select {
		case r.links <- l:
		default:
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *rig) init(t *testing.T) {
	t.Helper()
	if err := r.chip.Init(false); err != nil {
		t.Fatal(err)
	}
}
