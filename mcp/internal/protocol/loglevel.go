package protocol

// LogLevel is an RFC 5424 severity as MCP names it. Zero is "unset": every
// level passes. LogOff lets nothing pass (a 2026-07-28 request that set no
// _meta logLevel).
type LogLevel uint8

// The levels, least to most severe, and LogOff.
const (
	LogDebug LogLevel = iota + 1
	LogInfo
	LogNotice
	LogWarning
	LogError
	LogCritical
	LogAlert
	LogEmergency
	LogOff LogLevel = 255
)

var logLevelNames = [...]string{
	LogDebug: "debug", LogInfo: "info", LogNotice: "notice", LogWarning: "warning",
	LogError: "error", LogCritical: "critical", LogAlert: "alert", LogEmergency: "emergency",
}

// ParseLogLevel maps an MCP level name ("warning") to a LogLevel.
func ParseLogLevel(s string) (LogLevel, bool) {
	for l := LogDebug; l <= LogEmergency; l++ {
		if logLevelNames[l] == s {
			return l, true
		}
	}
	return 0, false
}

// String returns the MCP name of the level, "" when unset or unknown.
func (l LogLevel) String() string {
	if l > LogEmergency {
		return ""
	}
	return logLevelNames[l]
}

// Passes reports whether a message at level m passes the threshold l.
func (l LogLevel) Passes(m LogLevel) bool { return l == 0 || m >= l }
