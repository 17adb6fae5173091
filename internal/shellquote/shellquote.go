// Package shellquote quotes command lines that the workbench writes for
// others to run: the hints it prints for the user to paste into a
// terminal, and the hook commands it writes into hosts' files, which each
// host hands to a shell of its own. Each shell has its one quoting here.
package shellquote

import (
	"strings"
	"unicode"
)

// Shell is a command interpreter that a command line is quoted for.
type Shell int

const (
	// POSIX is sh and bash, Git Bash on Windows too (where Claude Code
	// runs its hooks).
	POSIX Shell = iota
	// Cmd is Windows' cmd.exe: a user's Command Prompt, and "cmd.exe /C"
	// where Codex runs its hooks on Windows.
	Cmd
	// PowerShell is Windows PowerShell or pwsh: where Gemini CLI runs its
	// hooks on Windows ("powershell.exe -NoProfile -Command").
	PowerShell
)

// ForOS returns the shell a user of the system goos (as runtime.GOOS
// names it) types commands into: cmd.exe on Windows, whose quoting
// PowerShell also reads for a program path that needs none; a POSIX
// shell elsewhere.
func ForOS(goos string) Shell {
	if goos == "windows" {
		return Cmd
	}
	return POSIX
}

// Quote returns s as one word of a command line for sh, quoted only when
// it needs to be.
func (sh Shell) Quote(s string) string {
	switch sh {
	case Cmd:
		return quoteCmd(s)
	case PowerShell:
		return quotePowerShell(s)
	}
	return quotePOSIX(s)
}

// Command returns the command line that runs program with args in sh,
// each word quoted by [Shell.Quote]. PowerShell takes a quoted first word
// for a string, not a command, so there a quoted program is preceded by
// the call operator "&".
func (sh Shell) Command(program string, args ...string) string {
	words := make([]string, 0, 1+len(args))
	p := sh.Quote(program)
	if sh == PowerShell && p != program {
		p = "& " + p
	}
	words = append(words, p)
	for _, a := range args {
		words = append(words, sh.Quote(a))
	}
	return strings.Join(words, " ")
}

// quotePOSIX quotes s in single quotes, inside which a POSIX shell takes
// every character as it is but the single quote, written '\”.
func quotePOSIX(s string) string {
	if s != "" && onlyOf(s, "_@%+=:,./-") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// quoteCmd quotes s for cmd.exe as [BatchArg] does, but leaves '~' bare
// (it is not special to cmd.exe outside "%~"), so that an 8.3 short path
// such as C:\PROGRA~1\… needs no quotes.
func quoteCmd(s string) string { return cmdWord(s, `#$*+-./:?@\_~`) }

// BatchArg returns s as one argument of a batch file (.cmd, .bat) on the
// command line cmd.exe runs it with, quoted as Rust's standard library
// quotes a batch file's arguments since the 2024 advisory
// (CVE-2024-24576; its make_bat_command_line), so that the batch file, and
// a program it passes %* to, gets s as one argument by the C runtime's
// rules:
//   - a word with anything but letters, digits and #$*+-./:?@\_ (or that
//     is empty, or ends in a backslash) is quoted, so that cmd.exe's
//     metacharacters (&|<>^() and spaces) are inert;
//   - inside the quotes a '"' is doubled, which cmd.exe reads as staying
//     in quotes and the C runtime as a literal quote;
//   - backslashes are doubled only before a quote (the closing one too);
//   - '%' becomes "%%cd:~,%": a literal '%' and an empty substring of %cd%,
//     so that "%NAME%" never reaches cmd.exe's expansion whole.
//
// [Cmd] quotes a word the same way but for '~', which it leaves bare. A
// line break cannot be quoted for cmd.exe, which ends the command there:
// the caller refuses one.
func BatchArg(s string) string { return cmdWord(s, `#$*+-./:?@\_`) }

// cmdWord quotes s for cmd.exe as [BatchArg] describes, leaving a word
// bare that holds nothing but ASCII letters, digits and the characters of
// safe.
func cmdWord(s, safe string) string {
	quote := s == "" || strings.HasSuffix(s, `\`) // a trailing \ must not escape the closing quote
	for _, r := range s {
		if r < 0x80 && !onlyOf(string(r), safe) || unicode.IsControl(r) {
			quote = true
			break
		}
	}
	var b strings.Builder
	if quote {
		b.WriteByte('"')
	}
	backslashes := 0
	for _, r := range s {
		switch r {
		case '\\':
			backslashes++
		case '"':
			b.WriteString(strings.Repeat(`\`, backslashes)) // 2n backslashes before a quote
			b.WriteByte('"')                                // "" is an escaped quote
			backslashes = 0
		case '%':
			b.WriteString("%%cd:~,")
			backslashes = 0
		default:
			backslashes = 0
		}
		b.WriteRune(r)
	}
	if quote {
		b.WriteString(strings.Repeat(`\`, backslashes)) // 2n backslashes before the closing quote
		b.WriteByte('"')
	}
	return b.String()
}

// quotePowerShell quotes s in single quotes, inside which PowerShell takes
// every character as it is ($ and ` too) but a single quote, written
// twice; PowerShell also reads the typographic single quotes ‘’‚‛ as
// quotes, so they are doubled too.
func quotePowerShell(s string) string {
	if s != "" && onlyOf(s, `_+=:./\-`) {
		return s
	}
	var b strings.Builder
	b.WriteByte('\'')
	for _, r := range s {
		if strings.ContainsRune("'‘’‚‛", r) {
			b.WriteRune(r)
		}
		b.WriteRune(r)
	}
	b.WriteByte('\'')
	return b.String()
}

// onlyOf reports whether s holds nothing but ASCII letters, digits and
// the characters of extra.
func onlyOf(s, extra string) bool {
	for _, r := range s {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9':
		case r < 0x80 && strings.ContainsRune(extra, r):
		default:
			return false
		}
	}
	return true
}
