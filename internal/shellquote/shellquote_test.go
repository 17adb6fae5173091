package shellquote

import (
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

func TestForOS(t *testing.T) {
	for goos, want := range map[string]Shell{"windows": Cmd, "linux": POSIX, "darwin": POSIX, "freebsd": POSIX} {
		if got := ForOS(goos); got != want {
			t.Errorf("ForOS(%s) = %v, want %v", goos, got, want)
		}
	}
}

func TestQuote(t *testing.T) {
	for _, tc := range []struct {
		in                     string
		posix, cmd, powershell string
	}{
		{"plain", "plain", "plain", "plain"},
		{"--config", "--config", "--config", "--config"},
		{"", "''", `""`, "''"},
		{"/home/ann/.config/mcp-workbench/config.json", "/home/ann/.config/mcp-workbench/config.json", "/home/ann/.config/mcp-workbench/config.json", "/home/ann/.config/mcp-workbench/config.json"},
		{`C:\Users\ann\wb.exe`, `'C:\Users\ann\wb.exe'`, `C:\Users\ann\wb.exe`, `C:\Users\ann\wb.exe`},
		{`C:\Program Files\wb\wb.exe`, `'C:\Program Files\wb\wb.exe'`, `"C:\Program Files\wb\wb.exe"`, `'C:\Program Files\wb\wb.exe'`},
		// A trailing backslash must not escape the closing quote (C runtime).
		{`C:\my dir\`, `'C:\my dir\'`, `"C:\my dir\\"`, `'C:\my dir\'`},
		{`C:\dir\`, `'C:\dir\'`, `"C:\dir\\"`, `C:\dir\`},
		{"it's", `'it'\''s'`, `"it's"`, `'it''s'`},
		{"a‘b’", "'a‘b’'", "a‘b’", "'a‘‘b’’'"},
		{`say "hi"`, `'say "hi"'`, `"say ""hi"""`, `'say "hi"'`},
		{`a\"b`, `'a\"b'`, `"a\\""b"`, `'a\"b'`},
		{"%PATH%", "%PATH%", `"%%cd:~,%PATH%%cd:~,%"`, "'%PATH%'"},
		{"a&b|c<d>e^f(g)", "'a&b|c<d>e^f(g)'", `"a&b|c<d>e^f(g)"`, "'a&b|c<d>e^f(g)'"},
		{"$HOME`x", "'$HOME`x'", "\"$HOME`x\"", "'$HOME`x'"},
		{"!x", "'!x'", `"!x"`, "'!x'"},
		{"tab\there", "'tab\there'", "\"tab\there\"", "'tab\there'"},
		{"Zoë", "'Zoë'", "Zoë", "'Zoë'"},
		{"a,b;c", "'a,b;c'", `"a,b;c"`, "'a,b;c'"},
		{"@x", "@x", "@x", "'@x'"},
	} {
		for _, c := range []struct {
			sh   Shell
			want string
		}{{POSIX, tc.posix}, {Cmd, tc.cmd}, {PowerShell, tc.powershell}} {
			if got := c.sh.Quote(tc.in); got != c.want {
				t.Errorf("%v.Quote(%q) = %s, want %s", c.sh, tc.in, got, c.want)
			}
		}
	}
}

func TestCommand(t *testing.T) {
	for _, tc := range []struct {
		sh      Shell
		program string
		want    string
	}{
		{POSIX, `/opt/wb/mcp-workbench`, `/opt/wb/mcp-workbench hook codex --config 'C:\a b\c.json'`},
		{Cmd, `C:\Users\ann\wb.exe`, `C:\Users\ann\wb.exe hook codex --config "C:\a b\c.json"`},
		{Cmd, `C:\Program Files\wb.exe`, `"C:\Program Files\wb.exe" hook codex --config "C:\a b\c.json"`},
		{PowerShell, `C:\Users\ann\wb.exe`, `C:\Users\ann\wb.exe hook codex --config 'C:\a b\c.json'`},
		{PowerShell, `C:\Program Files\wb.exe`, `& 'C:\Program Files\wb.exe' hook codex --config 'C:\a b\c.json'`},
	} {
		if got := tc.sh.Command(tc.program, "hook", "codex", "--config", `C:\a b\c.json`); got != tc.want {
			t.Errorf("%v.Command(%s, …) = %s, want %s", tc.sh, tc.program, got, tc.want)
		}
	}
}

// What POSIX quotes, a real sh reads back as the very words.
func TestPOSIXThroughSh(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no POSIX shell on Windows")
	}
	words := []string{"", "plain", `C:\Program Files\wb.exe`, "it's", `"q" \ $HOME ` + "`x` !x *", "%PATH%", "a\nb", "Zoë ‘’"}
	line := POSIX.Command("printf", append([]string{`%s\0`}, words...)...)
	out, err := exec.Command("sh", "-c", line).Output()
	if err != nil {
		t.Fatalf("sh -c %s: %v", line, err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if strings.Join(got, "|") != strings.Join(words, "|") || len(got) != len(words) {
		t.Errorf("sh read %q\nwant %q", got, words)
	}
}

func (sh Shell) String() string {
	return [...]string{"POSIX", "Cmd", "PowerShell"}[sh]
}

// BatchArg quotes as Cmd does, but '~' too (Rust's list of characters a
// batch file's argument may hold bare has none): the quoting of the
// arguments of a .cmd server's command line (serverproc) is unchanged.
func TestBatchArg(t *testing.T) {
	for in, want := range map[string]string{
		"":                    `""`,
		"-y":                  "-y",
		"@scope/pkg@1.2.3":    "@scope/pkg@1.2.3",
		`C:\Users\ann\srv.js`: `C:\Users\ann\srv.js`,
		`C:\my dir\`:          `"C:\my dir\\"`,
		"https://x/?a=1&b=2":  `"https://x/?a=1&b=2"`,
		`say "hi"`:            `"say ""hi"""`,
		`a\"b`:                `"a\\""b"`,
		"%PATH%":              `"%%cd:~,%PATH%%cd:~,%"`,
		"~":                   `"~"`,
		`C:\PROGRA~1\wb.exe`:  `"C:\PROGRA~1\wb.exe"`,
		"Zoë":                 "Zoë",
		"tab\there":           "\"tab\there\"",
		"!x":                  `"!x"`,
	} {
		if got := BatchArg(in); got != want {
			t.Errorf("BatchArg(%q) = %s, want %s", in, got, want)
		}
		if cmd := Cmd.Quote(in); !strings.Contains(in, "~") && cmd != want {
			t.Errorf("Cmd.Quote(%q) = %s, BatchArg %s: they differ but for ~", in, cmd, want)
		}
	}
}
