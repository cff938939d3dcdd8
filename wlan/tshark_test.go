package wlan_test

import (
	"bytes"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gowrt/gowrt/internal/pcap"
	"github.com/gowrt/gowrt/wlan"
	"github.com/gowrt/gowrt/wlan/ie"
)

var (
	ap  = wlan.MAC{0x02, 0x00, 0x00, 0x00, 0x00, 0x01}
	sta = wlan.MAC{0x02, 0x00, 0x00, 0x00, 0x00, 0x02}
	lan = wlan.MAC{0x02, 0x00, 0x00, 0x00, 0x00, 0x03}
	wds = wlan.MAC{0x02, 0x00, 0x00, 0x00, 0x00, 0x04}
)

type tsharkCase struct {
	name  string
	frame []byte
	want  map[string]string // tshark field → value as tshark prints it
}

// expertField lists Wireshark's expert messages (warnings such as
// "Malformed Packet"); a frame whose want does not name it must have none.
const expertField = "_ws.expert.message"

// arpRequest returns an LLC/SNAP-encapsulated ARP request (RFC 1042, RFC
// 826) from sha/spa for tpa.
func arpRequest(sha wlan.MAC, spa, tpa [4]byte) []byte {
	b := []byte{0xaa, 0xaa, 0x03, 0x00, 0x00, 0x00, 0x08, 0x06} // LLC/SNAP, EtherType ARP
	b = append(b, 0x00, 0x01, 0x08, 0x00, 6, 4, 0x00, 0x01)     // Ethernet, IPv4, request
	b = append(b, sha[:]...)
	b = append(b, spa[:]...)
	b = append(b, make([]byte, 6)...)
	return append(b, tpa[:]...)
}

// TestTsharkDecodes writes frames built by this package and wlan/ie to a
// LINKTYPE_IEEE802_11 capture and checks that Wireshark's dissector reads
// every field back as built: an independent decoder for the layouts.
func TestTsharkDecodes(t *testing.T) {
	rates := []byte{0x8c, 0x12, 0x98, 0x24, 0xb0, 0x48, 0x60, 0x6c, 0x0c} // basic 6, 12, 24 Mb/s; 9 rates
	rsn := ie.RSN{Group: ie.CipherCCMP128, Capabilities: 0x000c}
	rsn.SetPairwise(ie.CipherCCMP128)
	rsn.SetAKMs(ie.AKMPSK)
	htCap := ie.HTCapabilities{Info: 0x01ef, AMPDUParams: 0x17}
	htCap.SetRxMCS(0)
	htCap.SetRxMCS(15)
	htOp := ie.HTOperation{Primary: 36, SecondaryOffset: ie.SecondaryAbove, AnyWidth: true, NonGreenfield: true}
	vhtCap := ie.VHTCapabilities{Info: 0x038000b2, RxMCSMap: 0xfffa, TxMCSMap: 0xfffa}
	vhtOp := ie.VHTOperation{ChannelWidth: ie.VHTWidth80, CCFS0: 42, BasicMCSMap: 0xfffc}
	wmm := ie.DefaultWMMParams()
	wmm.QoSInfo = 1
	var tim ie.VirtualBitmap
	tim.Set(1)
	tim.Set(100)

	var beaconIEs []byte
	beaconIEs = ie.AppendSSID(beaconIEs, []byte("gowrt"))
	beaconIEs = ie.AppendRates(beaconIEs, rates)
	beaconIEs = ie.AppendDSParams(beaconIEs, 36)
	beaconIEs = ie.AppendTIM(beaconIEs, 1, 3, true, &tim)
	beaconIEs = ie.AppendRSN(beaconIEs, &rsn)
	beaconIEs = ie.AppendHTCapabilities(beaconIEs, &htCap)
	beaconIEs = ie.AppendHTOperation(beaconIEs, &htOp)
	beaconIEs = ie.AppendVHTCapabilities(beaconIEs, &vhtCap)
	beaconIEs = ie.AppendVHTOperation(beaconIEs, &vhtOp)
	beaconIEs = ie.AppendWMM(beaconIEs, &wmm)

	capab := wlan.CapESS | wlan.CapPrivacy | wlan.CapShortSlotTime
	mgmt := func(k wlan.Kind, da, sa wlan.MAC, seq uint16, body []byte) []byte {
		return append(wlan.AppendMgmtHeader(nil, k, 0, da, sa, ap, seq), body...)
	}

	beacon := wlan.Beacon{Timestamp: 123456789, Interval: 100, Capability: capab, IEs: beaconIEs}
	probeReqIEs := ie.AppendRates(ie.AppendSSID(nil, []byte("gowrt")), rates[:4])
	assocIEs := ie.AppendSSID(nil, []byte("gowrt"))
	assocIEs = ie.AppendRates(assocIEs, rates)
	assocIEs = ie.AppendRSN(assocIEs, &rsn)
	assocIEs = ie.AppendHTCapabilities(assocIEs, &htCap)
	assocIEs = ie.AppendWMM(assocIEs, &ie.WMM{QoSInfo: 0x0f})
	assocReq := wlan.AssocReq{Capability: capab, ListenInterval: 10, CurrentAP: ap, IEs: assocIEs}
	assocResp := wlan.AssocResp{Capability: capab, Status: wlan.StatusSuccess, AID: 1, IEs: ie.AppendRates(nil, rates)}
	authReq := wlan.Auth{Algorithm: wlan.AuthOpenSystem, Seq: 1}
	authResp := wlan.Auth{Algorithm: wlan.AuthOpenSystem, Seq: 2, Status: wlan.StatusSuccess}
	addbaReq := wlan.ADDBAReq{Dialog: 7, Params: wlan.NewBAParams(6, 64, true), Timeout: 0, StartSeq: wlan.NewSeqControl(100, 0)}
	addbaResp := wlan.ADDBAResp{Dialog: 7, Status: wlan.StatusSuccess, Params: wlan.NewBAParams(6, 32, false), Timeout: 5000}
	delba := wlan.DELBA{Initiator: true, TID: 6, Reason: wlan.ReasonEndBA}

	wdsHdr := wlan.Header{
		FC:    wlan.NewFrameControl(wlan.KindQoSData, wlan.FlagToDS|wlan.FlagFromDS),
		Addr1: ap, Addr2: sta, Addr3: lan, Addr4: wds,
		Seq: wlan.NewSeqControl(321, 0), QoS: wlan.NewQoSControl(5, wlan.AckNormal, true, false),
	}
	wdsFrame := wlan.AppendHeader(nil, &wdsHdr)
	start := len(wdsFrame)
	wdsFrame = wlan.AppendAMSDUSubframe(wdsFrame, start, lan, wds, arpRequest(wds, [4]byte{192, 168, 1, 4}, [4]byte{192, 168, 1, 3}))
	wdsFrame = wlan.AppendAMSDUSubframe(wdsFrame, start, lan, wds, arpRequest(wds, [4]byte{192, 168, 1, 4}, [4]byte{192, 168, 1, 1}))

	qosHdr := wlan.Header{
		FC:    wlan.NewFrameControl(wlan.KindQoSData, wlan.FlagFromDS|wlan.FlagRetry|wlan.FlagMoreData),
		Addr1: sta, Addr2: ap, Addr3: lan, Seq: wlan.NewSeqControl(4095, 0),
		QoS: wlan.NewQoSControl(6, wlan.AckBlockAck, false, true),
	}
	qosFrame := append(wlan.AppendHeader(nil, &qosHdr), arpRequest(lan, [4]byte{192, 168, 1, 3}, [4]byte{192, 168, 1, 2})...)
	ssidHex := hex.EncodeToString([]byte("gowrt")) // tshark prints the SSID field as bytes
	ba := wlan.BlockAck{TID: 6, StartSeq: 100, Bitmap: 0x8000_0000_0000_000b}
	var missing []string
	for sn := uint16(100); sn < 164; sn++ {
		if !ba.Acked(sn) {
			missing = append(missing, strconv.Itoa(int(sn)))
		}
	}
	nullHdr := wlan.Header{FC: wlan.NewFrameControl(wlan.KindNull, wlan.FlagToDS|wlan.FlagPwrMgt), Addr1: ap, Addr2: sta, Addr3: ap, Seq: wlan.NewSeqControl(5, 0)}

	cases := []tsharkCase{
		{"beacon", mgmt(wlan.KindBeacon, wlan.Broadcast, ap, 19, beacon.Append(nil)), map[string]string{
			"wlan.fc.type_subtype": "0x0008", "wlan.seq": "19", "wlan.bssid": "02:00:00:00:00:01",
			"wlan.fixed.timestamp": "123456789", "wlan.fixed.beacon": "100", "wlan.fixed.capabilities": "0x0411",
			"wlan.ssid": ssidHex, "wlan.supported_rates": "0x8c,0x12,0x98,0x24,0xb0,0x48,0x60,0x6c",
			"wlan.extended_supported_rates": "0x0c", "wlan.ds.current_channel": "36",
			"wlan.tim.dtim_count": "1", "wlan.tim.dtim_period": "3", "wlan.tim.bmapctl.multicast": "1",
			"wlan.tim.bmapctl.offset": "0x00", "wlan.tim.aid": "0x01,0x64",
			"wlan.rsn.version": "1", "wlan.rsn.gcs.type": "4", "wlan.rsn.pcs.count": "1", "wlan.rsn.pcs.type": "4",
			"wlan.rsn.akms.count": "1", "wlan.rsn.akms.type": "2", "wlan.rsn.capabilities.ptksa_replay_counter": "0x0003",
			"wlan.ht.capabilities": "0x01ef", "wlan.ht.ampduparam": "0x17",
			"wlan.ht.info.primarychannel": "36", "wlan.ht.info.secchanoffset": "0x01", "wlan.ht.info.chanwidth": "1",
			"wlan.vht.capabilities": "0x038000b2", "wlan.vht.capabilities.maxampdu": "0x00000007",
			"wlan.vht.op.channelwidth": "1", "wlan.vht.op.channelcenter0": "42", "wlan.vht.op.channelcenter1": "0",
			"wlan.wfa.ie.wme.subtype": "1", "wlan.wfa.ie.wme.acp.aifsn": "3,7,2,2",
			"wlan.wfa.ie.wme.acp.cw.min": "15,15,7,3", "wlan.wfa.ie.wme.acp.cw.max": "1023,1023,15,7",
		}},
		{"probe request", mgmt(wlan.KindProbeReq, wlan.Broadcast, sta, 1, probeReqIEs), map[string]string{
			"wlan.fc.type_subtype": "0x0004", "wlan.ssid": ssidHex, "wlan.supported_rates": "0x8c,0x12,0x98,0x24",
		}},
		{"probe response", mgmt(wlan.KindProbeResp, sta, ap, 20, beacon.Append(nil)), map[string]string{
			"wlan.fc.type_subtype": "0x0005", "wlan.da": "02:00:00:00:00:02", "wlan.ssid": ssidHex, "wlan.rsn.akms.type": "2",
		}},
		{"auth request", mgmt(wlan.KindAuth, ap, sta, 2, authReq.Append(nil)), map[string]string{
			"wlan.fc.type_subtype": "0x000b", "wlan.fixed.auth.alg": "0", "wlan.fixed.auth_seq": "0x0001",
			"wlan.fixed.status_code": "0x0000",
		}},
		{"auth response", mgmt(wlan.KindAuth, sta, ap, 21, authResp.Append(nil)), map[string]string{
			"wlan.fc.type_subtype": "0x000b", "wlan.fixed.auth_seq": "0x0002", "wlan.fixed.status_code": "0x0000",
		}},
		{"assoc request", mgmt(wlan.KindAssocReq, ap, sta, 3, assocReq.Append(nil, false)), map[string]string{
			"wlan.fc.type_subtype": "0x0000", "wlan.fixed.capabilities": "0x0411", "wlan.fixed.listen_ival": "0x000a",
			"wlan.ssid": ssidHex, "wlan.rsn.akms.type": "2", "wlan.rsn.pcs.type": "4", "wlan.ht.capabilities": "0x01ef",
			"wlan.wfa.ie.wme.subtype": "0",
		}},
		{"reassoc request", mgmt(wlan.KindReassocReq, ap, sta, 4, assocReq.Append(nil, true)), map[string]string{
			"wlan.fc.type_subtype": "0x0002", "wlan.fixed.current_ap": "02:00:00:00:00:01", "wlan.ssid": ssidHex,
		}},
		{"assoc response", mgmt(wlan.KindAssocResp, sta, ap, 22, assocResp.Append(nil)), map[string]string{
			"wlan.fc.type_subtype": "0x0001", "wlan.fixed.status_code": "0x0000", "wlan.fixed.aid": "0x0001",
			"wlan.extended_supported_rates": "0x0c",
		}},
		{"deauth", mgmt(wlan.KindDeauth, sta, ap, 23, wlan.AppendReason(nil, wlan.ReasonDeauthLeaving)), map[string]string{
			"wlan.fc.type_subtype": "0x000c", "wlan.fixed.reason_code": "0x0003",
		}},
		{"disassoc", mgmt(wlan.KindDisassoc, sta, ap, 24, wlan.AppendReason(nil, wlan.ReasonInactivity)), map[string]string{
			"wlan.fc.type_subtype": "0x000a", "wlan.fixed.reason_code": "0x0004",
		}},
		{"addba request", mgmt(wlan.KindAction, ap, sta, 5, addbaReq.Append(nil)), map[string]string{
			"wlan.fc.type_subtype": "0x000d", "wlan.fixed.category_code": "3", "wlan.fixed.action_code": "0x00",
			"wlan.fixed.dialog_token": "0x07", "wlan.fixed.baparams.amsdu": "1", "wlan.fixed.baparams.policy": "1",
			"wlan.fixed.baparams.tid": "0x0006", "wlan.fixed.baparams.buffersize": "64", "wlan.fixed.batimeout": "0x0000",
			"wlan.fixed.ssc.sequence": "100",
		}},
		{"addba response", mgmt(wlan.KindAction, sta, ap, 25, addbaResp.Append(nil)), map[string]string{
			"wlan.fixed.action_code": "0x01", "wlan.fixed.status_code": "0x0000", "wlan.fixed.baparams.tid": "0x0006",
			"wlan.fixed.baparams.buffersize": "32", "wlan.fixed.baparams.amsdu": "0", "wlan.fixed.batimeout": "0x1388",
		}},
		{"delba", mgmt(wlan.KindAction, sta, ap, 26, delba.Append(nil)), map[string]string{
			"wlan.fixed.action_code": "0x02", "wlan.fixed.delba.param.initiator": "1", "wlan.fixed.delba.param.tid": "0x0006",
			"wlan.fixed.reason_code": "0x0025",
		}},
		{"blockackreq", wlan.AppendBlockAckReq(nil, 0, sta, ap, &wlan.BlockAckReq{TID: 6, StartSeq: 100}), map[string]string{
			"wlan.fc.type_subtype": "0x0018", "wlan.ra": "02:00:00:00:00:02", "wlan.ta": "02:00:00:00:00:01",
			"wlan.ba.control.ba_type": "0x0002", "wlan.fixed.ssc.sequence": "100",
		}},
		{"blockack", wlan.AppendBlockAck(nil, 0, ap, sta, &ba), map[string]string{
			"wlan.fc.type_subtype": "0x0019", "wlan.ba.control.ba_type": "0x0002", "wlan.fixed.ssc.sequence": "100",
			"wlan.ba.bm": "0b00000000000080", "wlan.ba.bm.missing_frame": strings.Join(missing, ","),
		}},
		{"ps-poll", wlan.AppendPSPoll(nil, 5, ap, sta), map[string]string{
			"wlan.fc.type_subtype": "0x001a", "wlan.aid": "5", "wlan.bssid": "02:00:00:00:00:01", "wlan.ta": "02:00:00:00:00:02",
		}},
		{"wds qos a-msdu", wdsFrame, map[string]string{
			"wlan.fc.type_subtype": "0x0028", "wlan.fc.ds": "0x03", "wlan.ra": "02:00:00:00:00:01",
			"wlan.ta": "02:00:00:00:00:02",
			// Wireshark labels Address 3 and 4 of a 4-address frame "BSS Id";
			// wlan.da and wlan.sa are the A-MSDU subframe headers.
			"wlan.bssid": "02:00:00:00:00:03,02:00:00:00:00:04",
			"wlan.da":    "02:00:00:00:00:03,02:00:00:00:00:03", "wlan.sa": "02:00:00:00:00:04,02:00:00:00:00:04",
			"wlan.seq": "321", "wlan.qos.tid": "5", "wlan.qos.amsdupresent": "1",
			"wlan_aggregate.a_mdsu.length": "36,36", "llc.type": "0x0806,0x0806",
			"arp.dst.proto_ipv4": "192.168.1.3,192.168.1.1", "arp.src.hw_mac": "02:00:00:00:00:04,02:00:00:00:00:04",
		}},
		{"qos data", qosFrame, map[string]string{
			"wlan.fc.type_subtype": "0x0028", "wlan.fc.ds": "0x02", "wlan.fc.retry": "1", "wlan.fc.moredata": "1",
			"wlan.seq": "4095", "wlan.qos.tid": "6", "wlan.qos.ack": "0x0003", "wlan.qos.amsdupresent": "0",
			"wlan.qos.eosp": "1", "llc.type": "0x0806", "arp.opcode": "1", "arp.dst.proto_ipv4": "192.168.1.2",
			expertField: "Retransmission (retry)",
		}},
		{"null", wlan.AppendHeader(nil, &nullHdr), map[string]string{
			"wlan.fc.type_subtype": "0x0024", "wlan.fc.pwrmgt": "1", "wlan.fc.ds": "0x01", "wlan.seq": "5",
		}},
	}

	path := filepath.Join(t.TempDir(), "wlan.pcap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pcap.NewWriter(f, pcap.LinkTypeIEEE80211, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		if err := w.WritePacket(time.Unix(1700000000, int64(i)*1000), c.frame); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	var fields []string
	for _, c := range cases {
		for k := range c.want {
			if !slices.Contains(fields, k) {
				fields = append(fields, k)
			}
		}
	}
	slices.Sort(fields)
	args := []string{"-r", path, "-T", "fields", "-E", "separator=|", "-E", "occurrence=a", "-E", "aggregator=,"}
	if !slices.Contains(fields, expertField) {
		fields = append(fields, expertField)
	}
	for _, k := range fields {
		args = append(args, "-e", k)
	}
	var stderr bytes.Buffer
	cmd := exec.Command("tshark", args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tshark: %v\n%s", err, stderr.Bytes())
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != len(cases) {
		t.Fatalf("tshark printed %d frames, wrote %d\n%s", len(lines), len(cases), out)
	}
	for i, c := range cases {
		got := strings.Split(lines[i], "|")
		for j, k := range fields {
			want, ok := c.want[k]
			if k == expertField {
				ok = true
			}
			if ok && got[j] != want {
				t.Errorf("%s: %s = %q, want %q", c.name, k, got[j], want)
			}
		}
	}
}
