package main

import (
	"os"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	const rev = "17021d9a1b2c3d4e5f60718293a4b5c6d7e8f901"
	tests := []struct {
		name    string
		ldflags string
		bi      *debug.BuildInfo
		want    string
	}{
		{"set at build time", "v1.2.3", &debug.BuildInfo{Main: debug.Module{Version: "v9.9.9"}}, "1.2.3"},
		{"set at build time, pre-release", "0.2.0-rc.1", nil, "0.2.0-rc.1"},
		{"set at build time but not semantic", "17021d9-dirty", nil, sourceVersion},
		{"go install @version", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.3.1"}}, "0.3.1"},
		{"go build of a tag", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.3.1"}, Settings: vcs(rev, "false")}, "0.3.1"},
		{"go build of a commit", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20251123105600-17021d9a1b2c"}, Settings: vcs(rev, "false")}, sourceVersion + "+17021d9a1b2c"},
		{"go build with changes", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20251123105600-17021d9a1b2c+dirty"}, Settings: vcs(rev, "true")}, sourceVersion + "+17021d9a1b2c.dirty"},
		{"go build of a tag with changes", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.3.1+dirty"}, Settings: vcs(rev, "true")}, sourceVersion + "+17021d9a1b2c.dirty"},
		{"go build outside version control", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, sourceVersion},
		{"go install @commit", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.1.1-0.20251123105600-17021d9a1b2c"}}, "0.1.1-0.20251123105600-17021d9a1b2c"},
		{"no build information", "", nil, sourceVersion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := versionOf(tt.ldflags, tt.bi)
			if got != tt.want {
				t.Errorf("versionOf(%q, …) = %q, want %q", tt.ldflags, got, tt.want)
			}
			if !semverRE.MatchString(got) {
				t.Errorf("%q is not a semantic version", got)
			}
		})
	}
	if got := Version(); !semverRE.MatchString(got) || !strings.HasPrefix(got, sourceVersion) {
		t.Errorf("this test binary's Version() = %q", got)
	}
}

// TestSourceVersionFollowsTheChangelog keeps sourceVersion honest: a
// release version is one CHANGELOG.md has a section for; a -dev version
// is one it has not released yet.
func TestSourceVersionFollowsTheChangelog(t *testing.T) {
	if !semverRE.MatchString(sourceVersion) || strings.HasPrefix(sourceVersion, "v") {
		t.Fatalf("sourceVersion %q is not a semantic version without a v", sourceVersion)
	}
	changelog, err := os.ReadFile("../../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	release, dev := strings.CutSuffix(sourceVersion, "-dev")
	heading := regexp.MustCompile(`(?m)^## \[?v?` + regexp.QuoteMeta(release) + `\]?( |$)`)
	switch released := heading.Match(changelog); {
	case dev && released:
		t.Errorf("sourceVersion %s: %s is released already (CHANGELOG.md); bump it to the next version's -dev", sourceVersion, release)
	case !dev && !released:
		t.Errorf("sourceVersion %s is a release, but CHANGELOG.md has no section ## %s", sourceVersion, release)
	}
}
