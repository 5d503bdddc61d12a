package mcp

import "github.com/saguaro-go/saguaro/mcp/internal/protocol"

// capability is what gates a method: the handler must implement (and, for
// a CapabilityReporter, report) it.
type capability uint8

const (
	capNone capability = iota
	capTools
	capResources
	capSubscribe
	capPrompts
	capCompletions
	capLogging
	capTasks  // the tasks extension is enabled
	capSkills // the handler serves skills
	// capNever marks the methods the table knows but the engine does not
	// serve (the experimental tasks of 2025-11-25): MethodNotFound.
	capNever
)

// methodInfo is one method of the table.
type methodInfo struct {
	name         string
	notification bool
	mode         protocol.Mode
	revisions    protocol.Revisions
	cap          capability
	run          methodFunc // nil: served by the transport (subscriptions/listen)
}

var (
	revsLegacy = protocol.RevisionSet(protocol.Rev20250326, protocol.Rev20250618, protocol.Rev20251125)
	revsAll    = protocol.RevisionSet(protocol.Rev20250326, protocol.Rev20250618, protocol.Rev20251125, protocol.Rev20260728)
	revsOnly11 = protocol.RevisionSet(protocol.Rev20251125)
	revsOnly26 = protocol.RevisionSet(protocol.Rev20260728)
)

// methodTable is the one table every transport uses. Revisions per the
// specification's schema of each revision.
func methodTable() []*methodInfo {
	const (
		fast      = protocol.ModeFast
		stateful  = protocol.ModeStateful
		streaming = protocol.ModeStreaming
	)
	return []*methodInfo{
		{name: "initialize", mode: stateful, revisions: revsLegacy, run: (*engine).initialize},
		{name: "ping", mode: fast, revisions: revsLegacy, run: (*engine).ping},
		{name: "tools/list", mode: stateful, revisions: revsAll, cap: capTools, run: (*engine).listTools},
		{name: "tools/call", mode: streaming, revisions: revsAll, cap: capTools, run: (*engine).callTool},
		{name: "resources/list", mode: stateful, revisions: revsAll, cap: capResources, run: (*engine).listResources},
		{name: "resources/templates/list", mode: stateful, revisions: revsAll, cap: capResources, run: (*engine).listTemplates},
		{name: "resources/read", mode: streaming, revisions: revsAll, cap: capResources, run: (*engine).readResource},
		{name: "resources/subscribe", mode: stateful, revisions: revsLegacy, cap: capSubscribe, run: (*engine).subscribe},
		{name: "resources/unsubscribe", mode: stateful, revisions: revsLegacy, cap: capSubscribe, run: (*engine).unsubscribe},
		{name: "prompts/list", mode: stateful, revisions: revsAll, cap: capPrompts, run: (*engine).listPrompts},
		{name: "prompts/get", mode: streaming, revisions: revsAll, cap: capPrompts, run: (*engine).getPrompt},
		{name: "completion/complete", mode: stateful, revisions: revsAll, cap: capCompletions, run: (*engine).complete},
		{name: "logging/setLevel", mode: stateful, revisions: revsLegacy, cap: capLogging, run: (*engine).setLevel},

		{name: "notifications/initialized", notification: true, mode: fast, revisions: revsLegacy, run: (*engine).initialized},
		{name: "notifications/cancelled", notification: true, mode: fast, revisions: revsAll, run: (*engine).cancelled},
		{name: "notifications/progress", notification: true, mode: fast, revisions: revsLegacy, run: (*engine).ignore},
		{name: "notifications/roots/list_changed", notification: true, mode: stateful, revisions: revsLegacy, run: (*engine).rootsChanged},

		// 2026-07-28.
		{name: "server/discover", mode: fast, revisions: revsOnly26, run: (*engine).discover},
		{name: "subscriptions/listen", mode: protocol.ModeListen, revisions: revsOnly26},
		{name: "tasks/get", mode: fast, revisions: revsOnly26, cap: capTasks, run: (*engine).tasksGet},
		{name: "tasks/update", mode: fast, revisions: revsOnly26, cap: capTasks, run: (*engine).tasksUpdate},
		{name: "tasks/cancel", mode: fast, revisions: revsOnly26, cap: capTasks, run: (*engine).tasksCancel},
		{name: "skills/list", mode: stateful, revisions: revsOnly26, cap: capSkills, run: (*engine).listSkills},
		{name: "skills/get", mode: stateful, revisions: revsOnly26, cap: capSkills, run: (*engine).getSkill},

		// Known to the table, not served (2025-11-25's experimental
		// tasks).
		{name: "tasks/result", mode: fast, revisions: revsOnly11, cap: capNever},
		{name: "tasks/list", mode: fast, revisions: revsOnly11, cap: capNever},
	}
}
