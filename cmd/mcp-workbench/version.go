package main

import (
	"context"
	"fmt"
	"regexp"
	"runtime/debug"
	"strings"
)

// sourceVersion is the version of this source tree. It is bumped at each
// release to the release's version (X.Y.Z, as CHANGELOG.md heads it), and
// right after to the next one with -dev, which it keeps until that release.
const sourceVersion = "0.2.0-dev"

// version, when set at build time (-ldflags "-X main.version=v1.2.3", as
// make build does for a tagged commit), wins over everything else, if it
// is a semantic version.
var version string

// Version returns the build's semantic version (https://semver.org),
// without a leading "v": the one set at build time; else the module
// version that go install …@vX.Y.Z recorded; else [sourceVersion] with
// the commit it was built from, when known, as build metadata
// (0.1.0-dev+0123456789ab, and .dirty for uncommitted changes).
func Version() string {
	bi, _ := debug.ReadBuildInfo()
	return versionOf(version, bi)
}

// semverRE matches a semantic version 2.0.0, with an optional leading "v".
var semverRE = regexp.MustCompile(`^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)` +
	`(-(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*)?` +
	`(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?$`)

// pseudoRE matches the pre-release part of a Go pseudo-version
// (v0.0.0-20250101120000-0123456789ab): what go build records for a commit
// that is not a release.
var pseudoRE = regexp.MustCompile(`(^|[-.])\d{14}-[0-9a-f]{12}(\+|$)`)

func versionOf(ldflags string, bi *debug.BuildInfo) string {
	if semverRE.MatchString(ldflags) {
		return strings.TrimPrefix(ldflags, "v")
	}
	var mod, rev string
	dirty := false
	if bi != nil {
		mod = bi.Main.Version
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	release := semverRE.MatchString(mod) && !pseudoRE.MatchString(mod) && !strings.Contains(mod, "+")
	switch {
	case release:
		// go install …@vX.Y.Z, or go build in a clean checkout of a tag.
		return strings.TrimPrefix(mod, "v")
	case rev != "":
		// go build in a checkout: this source's version at that commit.
		v := sourceVersion + "+" + rev[:min(len(rev), 12)]
		if dirty {
			v += ".dirty"
		}
		return v
	case semverRE.MatchString(mod):
		// go install …@commit: a pseudo-version, which names the commit.
		return strings.TrimPrefix(mod, "v")
	}
	return sourceVersion
}

const versionUsage = `Usage: mcp-workbench version

Prints the version: a semantic version, with the commit it was built from
when known. mcp-workbench --version prints the same.
` + globalFlagsHelp

// versionOptions is the parsed command line of mcp-workbench version.
type versionOptions struct {
	globalOptions
}

func runVersion(_ context.Context, e *env, args []string) error {
	var opts versionOptions
	fs := e.flagSet("version", &opts.globalOptions)
	positional, err := parse(fs, args)
	if err == nil {
		err = noArguments(positional)
	}
	if err == nil {
		_, err = parseLevel(opts.logLevel)
	}
	if err != nil {
		return e.usageError("version", err)
	}
	fmt.Fprintln(e.stdout, "mcp-workbench", Version())
	return nil
}
