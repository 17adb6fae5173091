//go:build windows

package serverproc

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/mcpworkbench/mcp-workbench/internal/shellquote"
	"golang.org/x/sys/windows"
)

// serverCommand returns the command that runs the program name with args.
//
// On Windows, servers are often started through batch files: npx.cmd, the
// .cmd shims npm installs for global packages, .bat wrappers. exec.Command
// finds them through PATHEXT, but Windows cannot run a batch file as a
// program: CreateProcess hands the whole command line to "cmd.exe /c",
// which parses it by its own rules, not by the CommandLineToArgvW rules
// that os/exec quotes for. An argument such as a URL with "&" in its query
// string then splits the command in two, "%NAME%" is expanded, and a batch
// path with spaces followed by a quoted argument fails outright
// (golang/go#27199, #17149; os/exec documents the gap and leaves the
// quoting to the caller through SysProcAttr.CmdLine, golang/go#69939).
//
// So for a batch file serverCommand runs cmd.exe itself with a command line
// quoted for cmd.exe, the way Rust's standard library does since the 2024
// batch-file advisory (CVE-2024-24576). Any other program is left to
// exec.Command unchanged.
func serverCommand(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	if cmd.Err != nil {
		return cmd
	}
	script := cmd.Path
	if filepath.IsAbs(script) {
		// exec.Command adds a PATHEXT extension to an absolute path only
		// when the command starts; resolve it now to see what will run.
		if lp, err := exec.LookPath(script); err == nil {
			script = lp
		}
	}
	if !isBatchFile(script) {
		return cmd
	}
	line, err := batchCommandLine(script, args)
	if err != nil {
		cmd.Err = err
		return cmd
	}
	sysDir, err := windows.GetSystemDirectory()
	if err != nil {
		cmd.Err = fmt.Errorf("locating cmd.exe to run %s: %w", script, err)
		return cmd
	}
	// The system's own cmd.exe, not %ComSpec% or one found in PATH or the
	// server's working directory.
	cmd.Path = filepath.Join(sysDir, "cmd.exe")
	cmd.SysProcAttr = &syscall.SysProcAttr{CmdLine: line}
	return cmd
}

// isBatchFile reports whether path names a file Windows runs with cmd.exe.
func isBatchFile(path string) bool {
	ext := filepath.Ext(path)
	return strings.EqualFold(ext, ".cmd") || strings.EqualFold(ext, ".bat")
}

// batchCommandLine returns a cmd.exe command line that runs script with
// args, each reaching the script as one argument (%1, %2, ...) and reaching
// a program the script passes %* to (as npm's shims do) unchanged.
//
// It follows Rust's make_bat_command_line (library/std/src/sys/args/windows.rs):
//   - /d skips AutoRun commands, /e:on enables the extensions the "%"
//     escape needs, /v:off keeps "!" literal, and /s with an extra pair of
//     quotes around everything makes cmd.exe strip exactly that pair;
//   - each argument is quoted by [shellquote.BatchArg]: cmd.exe's
//     metacharacters (&|<>^() and spaces) inert, '"' doubled inside the
//     quotes, backslashes doubled only before a quote, and '%' written
//     "%%cd:~,%" so that "%NAME%" never reaches cmd.exe's expansion intact;
//   - line breaks are refused: cmd.exe ends the command at one.
func batchCommandLine(script string, args []string) (string, error) {
	if strings.ContainsAny(script, "\"\r\n") || strings.HasSuffix(script, `\`) {
		return "", fmt.Errorf("batch file name %q cannot be passed to cmd.exe", script)
	}
	var b strings.Builder
	b.WriteString(`cmd.exe /d /e:on /v:off /s /c ""`)
	writeBatchPercents(&b, script)
	b.WriteByte('"')
	for i, arg := range args {
		if strings.ContainsAny(arg, "\r\n") {
			return "", fmt.Errorf("argument %d contains a line break, which cannot be passed to batch file %s", i+1, filepath.Base(script))
		}
		b.WriteByte(' ')
		b.WriteString(shellquote.BatchArg(arg))
	}
	b.WriteByte('"')
	return b.String(), nil
}

// writeBatchPercents writes s to b with each '%' escaped as in
// [shellquote.BatchArg], for a script path, which is quoted but not otherwise
// changed: Windows paths cannot hold '"'.
func writeBatchPercents(b *strings.Builder, s string) {
	for _, r := range s {
		if r == '%' {
			b.WriteString("%%cd:~,")
		}
		b.WriteRune(r)
	}
}
