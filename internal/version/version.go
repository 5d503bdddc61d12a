// Package version holds the release of saguaro this code is. It is
// internal because a user already has the version of a module they
// build with (its tag, and runtime/debug.ReadBuildInfo in a binary);
// the library uses it where it must name itself: the serverInfo of a
// server that names no one else, and the OpenTelemetry instrumentation
// scope.
package version

// Version is the newest release in CHANGELOG.md, without the leading v:
// the core module is tagged vVersion and mcpredis/go.mod requires that
// core. The commit that makes a release changes all three at once; the
// package's test fails when they disagree. Between releases it names the
// last one, and the changes since are listed under Unreleased.
const Version = "0.1.0"
