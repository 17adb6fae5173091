package main

import (
	"cmp"
	"fmt"
	"os"
	"regexp"
	"runtime/debug"
	"slices"
	"strconv"
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

// TestSourceVersionFollowsTheChangelog keeps sourceVersion and
// CHANGELOG.md in step: a release version is the newest version the
// changelog has a section for; a -dev version is one above it, not
// released yet.
func TestSourceVersionFollowsTheChangelog(t *testing.T) {
	if !semverRE.MatchString(sourceVersion) || strings.HasPrefix(sourceVersion, "v") {
		t.Fatalf("sourceVersion %q is not a semantic version without a v", sourceVersion)
	}
	changelog, err := os.ReadFile("../../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	sections, err := changelogSections(string(changelog))
	if err != nil {
		t.Fatalf("CHANGELOG.md: %v", err)
	}
	var newest string
	for _, s := range sections {
		if s.version != "Unreleased" {
			newest = s.version
			break
		}
	}
	if newest == "" {
		t.Fatal("CHANGELOG.md has no released version (## [X.Y.Z] - YYYY-MM-DD)")
	}
	release, dev := strings.CutSuffix(sourceVersion, "-dev")
	switch c := compareVersions(release, newest); {
	case !dev && c != 0:
		t.Errorf("sourceVersion %s is a release, but the newest version in CHANGELOG.md is %s", sourceVersion, newest)
	case dev && c <= 0:
		t.Errorf("sourceVersion %s: %s is released already (CHANGELOG.md's newest is %s); bump it to the next version's -dev", sourceVersion, newest, newest)
	}
}

// TestChangelogForm holds CHANGELOG.md to Keep a Changelog: ## [Unreleased]
// first, then ## [X.Y.Z] - YYYY-MM-DD newest first, each with a link
// reference, and each subsection (### Added, Changed, Deprecated, Removed,
// Fixed, Security) at most once per version.
func TestChangelogForm(t *testing.T) {
	changelog, err := os.ReadFile("../../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := changelogSections(string(changelog)); err != nil {
		t.Errorf("CHANGELOG.md: %v", err)
	}
	for _, bad := range []struct{ name, text string }{
		{"a subsection twice", "## [Unreleased]\n### Added\n- a\n### Fixed\n- b\n### Added\n- c\n[Unreleased]: u\n"},
		{"no Unreleased", "## [0.1.0] - 2026-11-27\n### Added\n- a\n[0.1.0]: u\n"},
		{"a heading without brackets", "## [Unreleased]\n## 0.1.0 - 2026-11-27\n[Unreleased]: u\n"},
		{"versions out of order", "## [Unreleased]\n## [0.1.0] - 2026-11-27\n## [0.2.0] - 2026-12-01\n[Unreleased]: u\n[0.1.0]: u\n[0.2.0]: u\n"},
		{"a version twice", "## [Unreleased]\n## [0.1.0] - 2026-11-27\n## [0.1.0] - 2026-11-27\n[Unreleased]: u\n[0.1.0]: u\n"},
		{"no link reference", "## [Unreleased]\n## [0.1.0] - 2026-11-27\n[Unreleased]: u\n"},
		{"an unknown subsection", "## [Unreleased]\n### Improved\n- a\n[Unreleased]: u\n"},
	} {
		if _, err := changelogSections(bad.text); err == nil {
			t.Errorf("a changelog with %s passes", bad.name)
		}
	}
}

type changelogSection struct {
	version     string // "Unreleased" or X.Y.Z
	subsections []string
}

var (
	versionHeadingRE = regexp.MustCompile(`^## \[(Unreleased|(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*))\]( - \d{4}-\d{2}-\d{2})?$`)
	linkRefRE        = regexp.MustCompile(`(?m)^\[([^\]]+)\]: \S+$`)
)

// changelogSections reads the version sections of a changelog in Keep a
// Changelog form, newest first, and says what breaks the form.
func changelogSections(text string) ([]changelogSection, error) {
	var sections []changelogSection
	known := map[string]bool{"Added": true, "Changed": true, "Deprecated": true, "Removed": true, "Fixed": true, "Security": true}
	for i, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "## "):
			m := versionHeadingRE.FindStringSubmatch(line)
			if m == nil {
				return nil, fmt.Errorf("line %d: %q is not ## [Unreleased] or ## [X.Y.Z] - YYYY-MM-DD", i+1, line)
			}
			if (m[1] == "Unreleased") != (m[5] == "") {
				return nil, fmt.Errorf("line %d: %q: a released version has a date, Unreleased none", i+1, line)
			}
			if m[1] == "Unreleased" && len(sections) > 0 {
				return nil, fmt.Errorf("line %d: ## [Unreleased] must come first", i+1)
			}
			if m[1] != "Unreleased" && len(sections) > 0 {
				if prev := sections[len(sections)-1].version; prev != "Unreleased" && compareVersions(prev, m[1]) <= 0 {
					return nil, fmt.Errorf("line %d: %s comes after %s; versions go newest first, each once", i+1, m[1], prev)
				}
			}
			sections = append(sections, changelogSection{version: m[1]})
		case strings.HasPrefix(line, "### "):
			if len(sections) == 0 {
				return nil, fmt.Errorf("line %d: %q before the first version", i+1, line)
			}
			name := strings.TrimPrefix(line, "### ")
			s := &sections[len(sections)-1]
			if !known[name] {
				return nil, fmt.Errorf("line %d: [%s] has a subsection %q; Keep a Changelog's are Added, Changed, Deprecated, Removed, Fixed and Security", i+1, s.version, name)
			}
			if slices.Contains(s.subsections, name) {
				return nil, fmt.Errorf("line %d: [%s] has ### %s twice; each subsection once per version", i+1, s.version, name)
			}
			s.subsections = append(s.subsections, name)
		}
	}
	if len(sections) == 0 || sections[0].version != "Unreleased" {
		return nil, fmt.Errorf("no ## [Unreleased] section first")
	}
	refs := map[string]bool{}
	for _, m := range linkRefRE.FindAllStringSubmatch(text, -1) {
		refs[m[1]] = true
	}
	for _, s := range sections {
		if !refs[s.version] {
			return nil, fmt.Errorf("[%s] has no link reference ([%s]: URL) at the bottom", s.version, s.version)
		}
	}
	return sections, nil
}

// compareVersions compares two X.Y.Z versions: -1, 0 or +1.
func compareVersions(a, b string) int {
	pa, pb := strings.SplitN(a, ".", 3), strings.SplitN(b, ".", 3)
	for i := range 3 {
		var x, y int
		if i < len(pa) {
			x, _ = strconv.Atoi(pa[i])
		}
		if i < len(pb) {
			y, _ = strconv.Atoi(pb[i])
		}
		if c := cmp.Compare(x, y); c != 0 {
			return c
		}
	}
	return 0
}
