package router_test

import (
	"testing"

	"github.com/gowrt/gowrt/net/router"
	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/transport/tcp"
)

// The router's stack uses buffers sized for a small board, not gVisor's
// server defaults (1 MiB growing to 4 MiB per direction).
func TestTCPBufferSizes(t *testing.T) {
	r, err := router.New(router.Config{HTTPPort: 8081, LAN: []router.Port{{Name: "lan1", NIC: &nullNIC{}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var snd tcpip.TCPSendBufferSizeRangeOption
	var rcv tcpip.TCPReceiveBufferSizeRangeOption
	if e := r.Stack().TransportProtocolOption(tcp.ProtocolNumber, &snd); e != nil {
		t.Fatal(e)
	}
	if e := r.Stack().TransportProtocolOption(tcp.ProtocolNumber, &rcv); e != nil {
		t.Fatal(e)
	}
	for name, o := range map[string][3]int{"send": {snd.Min, snd.Default, snd.Max}, "receive": {rcv.Min, rcv.Default, rcv.Max}} {
		if o[1] > 128<<10 || o[2] > 512<<10 || o[0] > o[1] || o[1] > o[2] {
			t.Errorf("%s buffer min/default/max %v", name, o)
		}
	}
}
