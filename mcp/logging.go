package mcp

import (
	"errors"
	"fmt"
)

// LogLevel is an RFC 5424 severity as MCP names it. The zero LogLevel is
// "unset": no logging/setLevel was received, and Request.Log then sends
// every level (the spec lets the server choose).
type LogLevel uint8

// The levels, least to most severe.
const (
	LogDebug LogLevel = iota + 1
	LogInfo
	LogNotice
	LogWarning
	LogError
	LogCritical
	LogAlert
	LogEmergency
)

var logLevelNames = [...]string{
	LogDebug: "debug", LogInfo: "info", LogNotice: "notice", LogWarning: "warning",
	LogError: "error", LogCritical: "critical", LogAlert: "alert", LogEmergency: "emergency",
}

// ErrLogLevel is returned for a level name MCP does not define.
var ErrLogLevel = errors.New("mcp: unknown log level")

// ParseLogLevel maps an MCP level name ("warning") to a LogLevel.
func ParseLogLevel(s string) (LogLevel, error) {
	for l := LogDebug; l <= LogEmergency; l++ {
		if logLevelNames[l] == s {
			return l, nil
		}
	}
	return 0, fmt.Errorf("%w: %q", ErrLogLevel, s)
}

// String returns the MCP name of the level, or "" when unset or unknown.
func (l LogLevel) String() string {
	if l > LogEmergency {
		return ""
	}
	return logLevelNames[l]
}

// MarshalJSON encodes the level as its MCP name.
func (l LogLevel) MarshalJSON() ([]byte, error) {
	if l == 0 || l > LogEmergency {
		return nil, fmt.Errorf("%w: %d", ErrLogLevel, l)
	}
	return []byte(`"` + l.String() + `"`), nil
}

// enabled reports whether a message at level m passes a session threshold.
func (l LogLevel) enabled(m LogLevel) bool { return l == 0 || m >= l }
