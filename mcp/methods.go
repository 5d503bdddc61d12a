package mcp

// Mode tells the session layer how to schedule a method (issue 4).
type Mode uint8

const (
	// ModeFast methods touch no handler state: answer at once, never
	// queue behind stateful work (ping, notifications/cancelled,
	// notifications/initialized, notifications/progress).
	ModeFast Mode = iota + 1
	// ModeStateful methods run a callback that threads the session's
	// state: one at a time per session, in arrival order, and the
	// returned state is kept.
	ModeStateful
	// ModeStreaming methods may emit progress, logs and server→client
	// requests while they run (tools/call, prompts/get, resources/read).
	// The session may run them concurrently on a snapshot of the state and
	// discard the state they return, or queue them as ModeStateful.
	ModeStreaming
)

// String names the mode.
func (m Mode) String() string {
	switch m {
	case ModeFast:
		return "fast"
	case ModeStateful:
		return "stateful"
	case ModeStreaming:
		return "streaming"
	}
	return "unknown"
}

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
	// capLater marks methods of the table that this engine does not serve
	// yet (tasks, server/discover, subscriptions/listen): MethodNotFound.
	capLater
)

// MethodInfo describes one method of the table.
type MethodInfo struct {
	// Name is the JSON-RPC method.
	Name string
	// Notification is true for client→server notifications, which never
	// get a response.
	Notification bool
	// Mode is how the session layer should schedule it.
	Mode Mode

	revisions revSet
	cap       capability
	run       methodFunc
}

// In reports whether the method exists in revision r.
func (m *MethodInfo) In(r Revision) bool { return m.revisions.has(r.orDefault()) }

// The method table: one for every transport. Revisions per
// schema/<rev>/schema.ts; 2026-07-28 rows are here so issue 5 only adds
// behaviour, not structure.
func methodTable() []*MethodInfo {
	return []*MethodInfo{
		{Name: "initialize", Mode: ModeStateful, revisions: revsLegacy, run: (*Engine).initialize},
		{Name: "ping", Mode: ModeFast, revisions: revsLegacy, run: (*Engine).ping},
		{Name: "tools/list", Mode: ModeStateful, revisions: revsAll, cap: capTools, run: (*Engine).listTools},
		{Name: "tools/call", Mode: ModeStreaming, revisions: revsAll, cap: capTools, run: (*Engine).callTool},
		{Name: "resources/list", Mode: ModeStateful, revisions: revsAll, cap: capResources, run: (*Engine).listResources},
		{Name: "resources/templates/list", Mode: ModeStateful, revisions: revsAll, cap: capResources, run: (*Engine).listTemplates},
		{Name: "resources/read", Mode: ModeStreaming, revisions: revsAll, cap: capResources, run: (*Engine).readResource},
		{Name: "resources/subscribe", Mode: ModeStateful, revisions: revsLegacy, cap: capSubscribe, run: (*Engine).subscribe},
		{Name: "resources/unsubscribe", Mode: ModeStateful, revisions: revsLegacy, cap: capSubscribe, run: (*Engine).unsubscribe},
		{Name: "prompts/list", Mode: ModeStateful, revisions: revsAll, cap: capPrompts, run: (*Engine).listPrompts},
		{Name: "prompts/get", Mode: ModeStreaming, revisions: revsAll, cap: capPrompts, run: (*Engine).getPrompt},
		{Name: "completion/complete", Mode: ModeStateful, revisions: revsAll, cap: capCompletions, run: (*Engine).complete},
		{Name: "logging/setLevel", Mode: ModeStateful, revisions: revsLegacy, cap: capLogging, run: (*Engine).setLevel},

		{Name: "notifications/initialized", Notification: true, Mode: ModeFast, revisions: revsLegacy, run: (*Engine).initialized},
		{Name: "notifications/cancelled", Notification: true, Mode: ModeFast, revisions: revsAll, run: (*Engine).cancelled},
		{Name: "notifications/progress", Notification: true, Mode: ModeFast, revisions: revsLegacy, run: (*Engine).ignore},
		{Name: "notifications/roots/list_changed", Notification: true, Mode: ModeStateful, revisions: revsLegacy, run: (*Engine).rootsChanged},

		// 2026-07-28. subscriptions/listen is served by the transport (a
		// long-lived stream); its row makes it known to the gates.
		{Name: "server/discover", Mode: ModeFast, revisions: revsOnly26, run: (*Engine).discover},
		{Name: "subscriptions/listen", Mode: ModeStreaming, revisions: revsOnly26, run: (*Engine).listenElsewhere},
		{Name: "tasks/get", Mode: ModeFast, revisions: revsOnly26, cap: capTasks, run: (*Engine).tasksGet},
		{Name: "tasks/update", Mode: ModeFast, revisions: revsOnly26, cap: capTasks, run: (*Engine).tasksUpdate},
		{Name: "tasks/cancel", Mode: ModeFast, revisions: revsOnly26, cap: capTasks, run: (*Engine).tasksCancel},
		{Name: "skills/list", Mode: ModeStateful, revisions: revsOnly26, cap: capSkills, run: (*Engine).listSkills},
		{Name: "skills/get", Mode: ModeStateful, revisions: revsOnly26, cap: capSkills, run: (*Engine).getSkill},

		// Reserved: known to the table, not served by this engine (the
		// 2025-11-25 experimental in-core tasks).
		{Name: "tasks/result", Mode: ModeFast, revisions: revsOnly11, cap: capLater},
		{Name: "tasks/list", Mode: ModeFast, revisions: revsOnly11, cap: capLater},
	}
}
