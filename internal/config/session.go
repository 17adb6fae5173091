package config

import (
	"runtime"
	"slices"
	"strings"
)

// SharedEnvVars are the variables of a host session's environment that a
// shared server starts from (see [SharedEnv]): where the user's files,
// programs, language and network are, nothing of one project's or one
// session's. A name ending in * stands for every name it begins. Proxy
// variables count in both cases; the Windows names are harmless elsewhere.
var SharedEnvVars = []string{
	"HOME", "USER", "LOGNAME", "PATH", "SHELL",
	"LANG", "LANGUAGE", "LC_*", "TZ",
	"TMPDIR", "TEMP", "TMP",
	"XDG_*",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
	"http_proxy", "https_proxy", "no_proxy", "all_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS",
	"SYSTEMROOT", "COMSPEC", "PATHEXT", "USERPROFILE", "APPDATA", "LOCALAPPDATA",
}

// sharedEnvVar reports whether name is one of [SharedEnvVars]. Windows
// spells its names in any case (Path, SystemRoot).
func sharedEnvVar(name string) bool {
	for _, v := range SharedEnvVars {
		switch prefix, ok := strings.CutSuffix(v, "*"); {
		case ok && strings.HasPrefix(name, prefix) && len(name) > len(prefix):
			return true
		case name == v, runtime.GOOS == "windows" && strings.EqualFold(name, v):
			return true
		}
	}
	return false
}

// SharedEnv returns the environment a shared server starts from: the
// variables of env (KEY=value entries) named in [SharedEnvVars], the last
// of a name winning, sorted by name, so that two sessions whose
// environments hold the same of them in another order launch the server
// alike. It is never nil: nil would mean the workbench's own environment.
func SharedEnv(env []string) []string {
	last := map[string]string{}
	for _, kv := range env {
		name, _, ok := strings.Cut(kv, "=")
		if ok && name != "" && sharedEnvVar(name) {
			last[name] = kv
		}
	}
	out := make([]string, 0, len(last))
	for _, kv := range last {
		out = append(out, kv)
	}
	slices.Sort(out)
	return out
}

// ShareAll turns sharing on as a top-level "shared": true would (serve's
// --shared does it for a file that does not): every server is shared but
// those that opted out.
func (c *Config) ShareAll() {
	c.Shared = true
	for _, tb := range c.Toolboxes {
		for _, s := range tb.Servers {
			s.Shared = !s.OptedOut
		}
	}
}

// ForSession adapts a configuration loaded for one host session of a
// shared workbench (by [LoadWith], its ${VAR} expanded from that session's
// environment env) to the session: every stdio server without a cwd runs
// in cwd, the folder the host started the workbench in, as it would have
// without sharing; a shared server starts from [SharedEnv] of env, any
// other server from the whole of env. Remote servers are left as they are.
func (c *Config) ForSession(env []string, cwd string) {
	own := slices.Clone(env)
	if own == nil {
		own = []string{}
	}
	shared := SharedEnv(env)
	for _, tb := range c.Toolboxes {
		for _, s := range tb.Servers {
			if s.Transport != Stdio {
				continue
			}
			if s.Cwd == "" && cwd != "" {
				s.Cwd, s.SessionCwd = cwd, true
			}
			if s.Shared {
				s.BaseEnv = shared
			} else {
				s.BaseEnv = own
			}
		}
	}
}
