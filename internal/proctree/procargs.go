package proctree

import (
	"bytes"
	"encoding/binary"
	"errors"
)

// procArgs is what macOS's KERN_PROCARGS2 sysctl gives of a process: the
// program it executed, its arguments and its environment, as they were
// at exec.
type procArgs struct {
	exec string
	args []string
	env  []string
}

// parseProcArgs2 reads a KERN_PROCARGS2 buffer: argc (a 32-bit integer in
// the machine's order, little-endian on every Mac), the executable path
// and the NUL bytes that pad it, then argc NUL-terminated arguments, then
// the NUL-terminated environment up to an empty string. What follows (the
// "apple" strings the kernel hands the dynamic linker: executable_path=,
// ptr_munge=, …) is not the environment and is left out. A buffer cut
// short, or with fewer strings than argc says, is malformed.
func parseProcArgs2(buf []byte) (procArgs, error) {
	var pa procArgs
	if len(buf) < 4 {
		return pa, errors.New("KERN_PROCARGS2: shorter than argc")
	}
	argc := int(binary.LittleEndian.Uint32(buf))
	rest := buf[4:]
	exec, rest, ok := bytes.Cut(rest, []byte{0})
	if !ok {
		return pa, errors.New("KERN_PROCARGS2: executable path without its NUL")
	}
	pa.exec = string(exec)
	rest = bytes.TrimLeft(rest, "\x00")
	if argc < 0 || argc > len(rest) {
		return pa, errors.New("KERN_PROCARGS2: argc larger than the buffer")
	}
	for range argc {
		arg, after, ok := bytes.Cut(rest, []byte{0})
		if !ok {
			return pa, errors.New("KERN_PROCARGS2: fewer arguments than argc")
		}
		pa.args = append(pa.args, string(arg))
		rest = after
	}
	for len(rest) > 0 {
		kv, after, _ := bytes.Cut(rest, []byte{0})
		if len(kv) == 0 {
			break // the end of the environment; the apple strings follow
		}
		pa.env = append(pa.env, string(kv))
		rest = after
	}
	return pa, nil
}
