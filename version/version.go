// Package version is hookrelay's release version: the constant this source
// tree releases (CHANGELOG.md's latest section), or what the build stamped.
package version

import (
	"runtime/debug"
	"strings"
)

// Release is the version this source tree releases: the newest section of
// CHANGELOG.md (a test checks that they agree).
const Release = "0.1.0"

// stamped is set by the build: `make build` passes
// -ldflags "-X github.com/hookrelay/hookrelay/version.stamped=…" with the
// release tag when HEAD is tagged (docs/development.md#releasing).
var stamped string

// String is the binary's version, without a leading "v": the stamped one,
// else the main module's version from the build info (set by `go install
// …@v0.1.0`, or by the Go toolchain from the repository's tags), else
// Release.
func String() string {
	info, _ := debug.ReadBuildInfo()
	return pick(stamped, info)
}

// pick is String's rule, with the build info as a parameter.
func pick(stamped string, info *debug.BuildInfo) string {
	if stamped != "" {
		return strings.TrimPrefix(stamped, "v")
	}
	if info != nil {
		if v := info.Main.Version; v != "" && v != "(devel)" {
			return strings.TrimPrefix(v, "v")
		}
	}
	return Release
}

// Commit is the VCS revision the binary was built from (its first twelve
// characters, "+dirty" when the tree had changes), or "" when the build
// recorded none.
func Commit() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	return commit(info)
}

// commit is Commit's rule, with the build info as a parameter.
func commit(info *debug.BuildInfo) string {
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev == "" {
		return ""
	}
	return rev[:min(12, len(rev))] + dirty
}
