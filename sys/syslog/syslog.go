// Package syslog is the router's system log: a bounded RAM ring of
// structured records (time, facility, severity, service, message), fed by
// log/slog (Handler) and by the kernel console (Writer), read by the
// shell's logread (Logread) and forwarded to a remote collector as RFC
// 5424 messages over UDP (Remote).
//
// The ring's memory is fixed when it is made: records are kept encoded in
// one preallocated byte slice and the oldest are overwritten (and
// counted) when a new one does not fit, so a chatty service can push old
// lines out but can never make the log grow. Nothing is ever written to
// flash: a reboot starts with an empty log, as with OpenWrt's logd, whose
// default 64 KiB buffer DefaultSize copies.
package syslog

import (
	"strconv"
)

// Severity is a syslog severity, RFC 5424 section 6.2.1 table 2: the
// smaller, the more severe.
type Severity uint8

// Severities, RFC 5424 section 6.2.1.
const (
	Emerg   Severity = 0 // system is unusable
	Alert   Severity = 1 // action must be taken immediately
	Crit    Severity = 2 // critical conditions
	Err     Severity = 3 // error conditions
	Warning Severity = 4 // warning conditions
	Notice  Severity = 5 // normal but significant condition
	Info    Severity = 6 // informational messages
	Debug   Severity = 7 // debug-level messages
)

// severityNames are the names logread prints and -p accepts, the
// <syslog.h> prioritynames spellings that OpenWrt's logread prints (the
// first name listed there for each value: "err", "warn").
var severityNames = [...]string{"emerg", "alert", "crit", "err", "warn", "notice", "info", "debug"}

// String returns the severity's logread name ("err", "warn", ...).
func (s Severity) String() string {
	if int(s) < len(severityNames) {
		return severityNames[s]
	}
	return strconv.Itoa(int(s))
}

// ParseSeverity reads a severity given by name ("err", "error",
// "warning", "warn", "emerg", "panic", ...) or by number 0-7.
func ParseSeverity(s string) (Severity, bool) {
	if n, err := strconv.Atoi(s); err == nil {
		if n >= 0 && n <= int(Debug) {
			return Severity(n), true
		}
		return 0, false
	}
	for i, name := range severityNames {
		if s == name {
			return Severity(i), true
		}
	}
	// The <syslog.h> aliases.
	switch s {
	case "panic":
		return Emerg, true
	case "error":
		return Err, true
	case "warning":
		return Warning, true
	}
	return 0, false
}

// Facility is a syslog facility, RFC 5424 section 6.2.1 table 1.
type Facility uint8

// Facilities, RFC 5424 section 6.2.1.
const (
	Kern     Facility = 0  // kernel messages
	User     Facility = 1  // user-level messages
	Mail     Facility = 2  // mail system
	Daemon   Facility = 3  // system daemons
	Auth     Facility = 4  // security/authorization messages
	Syslog   Facility = 5  // messages generated internally by syslogd
	LPR      Facility = 6  // line printer subsystem
	News     Facility = 7  // network news subsystem
	UUCP     Facility = 8  // UUCP subsystem
	Cron     Facility = 9  // clock daemon
	AuthPriv Facility = 10 // security/authorization messages
	FTP      Facility = 11 // FTP daemon
	NTP      Facility = 12 // NTP subsystem
	Audit    Facility = 13 // log audit
	LogAlert Facility = 14 // log alert
	Clock    Facility = 15 // clock daemon (note 2)
	Local0   Facility = 16 // local use 0 (local0) ... Local7 = 23
	Local1   Facility = 17
	Local2   Facility = 18
	Local3   Facility = 19
	Local4   Facility = 20
	Local5   Facility = 21
	Local6   Facility = 22
	Local7   Facility = 23
)

// maxFacility is the largest facility RFC 5424 defines (local7).
const maxFacility = Local7

// facilityNames are the <syslog.h> facilitynames spellings logread
// prints; 12-15 have no name there and get RFC 5424's descriptions.
var facilityNames = [...]string{
	"kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news",
	"uucp", "cron", "authpriv", "ftp", "ntp", "audit", "alert", "clock",
	"local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7",
}

// String returns the facility's logread name ("kern", "daemon", ...).
func (f Facility) String() string {
	if int(f) < len(facilityNames) {
		return facilityNames[f]
	}
	return strconv.Itoa(int(f))
}

// ParseFacility reads a facility given by name or by number 0-23.
func ParseFacility(s string) (Facility, bool) {
	if n, err := strconv.Atoi(s); err == nil {
		if n >= 0 && n <= int(maxFacility) {
			return Facility(n), true
		}
		return 0, false
	}
	for i, name := range facilityNames {
		if s == name {
			return Facility(i), true
		}
	}
	if s == "security" { // <syslog.h> alias of auth
		return Auth, true
	}
	return 0, false
}
