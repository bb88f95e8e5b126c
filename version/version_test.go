package version

import (
	"os"
	"regexp"
	"runtime/debug"
	"testing"
)

// TestPick: the stamped version wins, then the module's, then Release;
// a leading "v" is dropped and "(devel)" is no version.
func TestPick(t *testing.T) {
	mod := func(v string) *debug.BuildInfo { return &debug.BuildInfo{Main: debug.Module{Version: v}} }
	for _, c := range []struct {
		stamped string
		info    *debug.BuildInfo
		want    string
	}{
		{"v0.2.0", mod("v0.1.0"), "0.2.0"},
		{"", mod("v0.1.1-0.20261129024300-c182dc4abcde"), "0.1.1-0.20261129024300-c182dc4abcde"},
		{"", mod("(devel)"), Release},
		{"", mod(""), Release},
		{"", nil, Release},
	} {
		if got := pick(c.stamped, c.info); got != c.want {
			t.Errorf("pick(%q, %v) = %q, want %q", c.stamped, c.info, got, c.want)
		}
	}
}

// TestCommit: the revision's first twelve characters, marked when the tree
// had changes; nothing when the build recorded none.
func TestCommit(t *testing.T) {
	info := &debug.BuildInfo{Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "c182dc4a0123456789abcdef"}, {Key: "vcs.modified", Value: "true"}}}
	if got := commit(info); got != "c182dc4a0123+dirty" {
		t.Errorf("commit = %q", got)
	}
	if got := commit(&debug.BuildInfo{}); got != "" {
		t.Errorf("commit without a revision = %q", got)
	}
}

// TestChangelogNamesRelease: CHANGELOG.md's newest released section is
// Release, so the binary and the changelog name the same version.
func TestChangelogNamesRelease(t *testing.T) {
	b, err := os.ReadFile("../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("CHANGELOG.md has no released section (## [x.y.z] - YYYY-MM-DD)")
	}
	if string(m[1]) != Release {
		t.Errorf("CHANGELOG.md's newest release is %s; version.Release is %s", m[1], Release)
	}
}

// TestChartNamesRelease: the Helm chart's version and appVersion are
// Release (docs/development.md#releasing).
func TestChartNamesRelease(t *testing.T) {
	b, err := os.ReadFile("../deploy/helm/hookrelay/Chart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"version", "appVersion"} {
		m := regexp.MustCompile(`(?m)^` + key + `: "?([^"\n]+)"?$`).FindSubmatch(b)
		if m == nil || string(m[1]) != Release {
			t.Errorf("Chart.yaml's %s is %q; version.Release is %s", key, m, Release)
		}
	}
}
