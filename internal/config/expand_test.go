package config

import (
	"errors"
	"strings"
	"testing"
)

var testEnv = env(map[string]string{"HOME": "/home/u", "EMPTY": "", "TOKEN": "s3cr3t", "DOLLAR": "${HOME}"})

func TestExpand(t *testing.T) {
	tests := []struct {
		in, want string
		err      string // fragment of the error, "" for success
	}{
		{in: "", want: ""},
		{in: "plain", want: "plain"},
		{in: "${HOME}", want: "/home/u"},
		{in: "${HOME}/dev/${HOME}", want: "/home/u/dev//home/u"},
		{in: "Bearer ${TOKEN}", want: "Bearer s3cr3t"},
		{in: "${EMPTY}", want: ""},
		{in: "${EMPTY:-fallback}", want: "fallback"},         // empty takes the default, as in the shell
		{in: "${UNSET:-fallback}", want: "fallback"},         // unset takes the default
		{in: "${UNSET:-}", want: ""},                         // an empty default is a default
		{in: "${HOME:-other}", want: "/home/u"},              // set wins
		{in: "${UNSET:-a:-b}", want: "a:-b"},                 // the default is literal text
		{in: "${UNSET:-${HOME}", want: "${HOME"},             // the default ends at the first }
		{in: "${DOLLAR}", want: "${HOME}"},                   // values are not expanded again
		{in: "cost $5 and $HOME", want: "cost $5 and $HOME"}, // lone $ is literal
		{in: "$${HOME}", want: "${HOME}"},                    // escaped
		{in: "a$${b}c${HOME}", want: "a${b}c/home/u"},
		{in: "Bearer ${env:TOKEN}", want: "Bearer s3cr3t"}, // Cursor's spelling
		{in: "${env:UNSET:-d}", want: "d"},
		{in: "${userHome}/.config", want: "/home/u/.config"}, // Cursor's home folder
		{in: "${env:}", err: "invalid variable name"},
		{in: "${env:UNSET}", err: "environment variable UNSET is not set"},
		{in: "${UNSET}", err: "environment variable UNSET is not set"},
		{in: "x ${HOME", err: "unterminated ${"},
		{in: "${}", err: "invalid variable name"},
		{in: "${1A}", err: "invalid variable name"},
		{in: "${A-B}", err: "invalid variable name"},
		{in: "${:-x}", err: "invalid variable name"},
	}
	for _, tt := range tests {
		got, err := expandVars(tt.in, testEnv)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("expandVars(%q) = %q, %v; want error containing %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("expandVars(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestExpandUnsetVarError(t *testing.T) {
	_, err := expandVars("a ${NOPE} b", testEnv)
	var uv *unsetVarError
	if !errors.As(err, &uv) || uv.Name != "NOPE" {
		t.Fatalf("err = %#v, want *unsetVarError{NOPE}", err)
	}
}

// FuzzExpand checks properties that hold for every input: no panic; text
// without "${" is unchanged; a successful result never holds more "${" than
// the escapes and values can explain; and expanding a reference to a set
// variable inside arbitrary literal text gives that text around the value.
// The seed corpus runs as a normal test.
func FuzzExpand(f *testing.F) {
	for _, s := range []string{
		"", "plain", "${HOME}", "${UNSET:-d}", "$${x}", "${", "${}", "$", "$$", "${A:-}", "}${HOME}{",
		"${HOME", "${HOME:-${X}}", "é${HOME}ü", "${TOKEN}${TOKEN}", "$$${HOME}", "\x00${HOME}\xff",
	} {
		f.Add(s)
	}
	lookup := env(map[string]string{"HOME": "/h", "TOKEN": "t", "A": "a"})
	f.Fuzz(func(t *testing.T, s string) {
		got, err := expandVars(s, lookup)
		if !strings.Contains(s, "${") {
			if err != nil || got != s {
				t.Fatalf("expandVars(%q) = %q, %v; want it unchanged", s, got, err)
			}
		}
		if err == nil && strings.Count(got, "${") > strings.Count(s, "$${")+strings.Count(s, "${") {
			t.Fatalf("expandVars(%q) = %q made new references", s, got)
		}
		// Literal text around a reference is kept as it is when it holds no "${" or "$".
		if !strings.Contains(s, "$") {
			wrapped := s + "${HOME}" + s
			got, err := expandVars(wrapped, lookup)
			if err != nil || got != s+"/h"+s {
				t.Fatalf("expandVars(%q) = %q, %v; want %q", wrapped, got, err, s+"/h"+s)
			}
			if !strings.Contains(s, "}") {
				def := "${UNSET:-" + s + "}"
				if got, err := expandVars(def, lookup); err != nil || got != s {
					t.Fatalf("expandVars(%q) = %q, %v; want the default %q", def, got, err, s)
				}
			}
		}
	})
}
