package dnsfwd

import (
	"testing"

	"github.com/miekg/dns"
)

// TestRegistryValuesMatchMiekg checks the package's own registry
// constants against miekg/dns, an independent transcription of the same
// IANA registries.
func TestRegistryValuesMatchMiekg(t *testing.T) {
	for _, c := range []struct {
		name      string
		ours, ref int
	}{
		{"typeA", typeA, int(dns.TypeA)},
		{"typeSOA", typeSOA, int(dns.TypeSOA)},
		{"typePTR", typePTR, int(dns.TypePTR)},
		{"typeAAAA", typeAAAA, int(dns.TypeAAAA)},
		{"typeOPT", typeOPT, int(dns.TypeOPT)},
		{"typeIXFR", typeIXFR, int(dns.TypeIXFR)},
		{"typeAXFR", typeAXFR, int(dns.TypeAXFR)},
		{"typeANY", typeANY, int(dns.TypeANY)},
		{"classINET", classINET, int(dns.ClassINET)},
		{"opcodeQuery", opcodeQuery, dns.OpcodeQuery},
		{"rcodeSuccess", rcodeSuccess, dns.RcodeSuccess},
		{"rcodeFormatError", rcodeFormatError, dns.RcodeFormatError},
		{"rcodeServerFailure", rcodeServerFailure, dns.RcodeServerFailure},
		{"rcodeNameError", rcodeNameError, dns.RcodeNameError},
		{"rcodeNotImplemented", rcodeNotImplemented, dns.RcodeNotImplemented},
		{"rcodeRefused", rcodeRefused, dns.RcodeRefused},
		{"rcodeBadVers", rcodeBadVers, dns.RcodeBadVers},
		{"optionEDE", optionEDE, int(dns.EDNS0EDE)},
		{"edeBlocked", edeBlocked, int(dns.ExtendedErrorCodeBlocked)},
	} {
		if c.ours != c.ref {
			t.Errorf("%s = %d, miekg/dns says %d", c.name, c.ours, c.ref)
		}
	}
}
