package hostconfig

import (
	"fmt"
	"io"
	"io/fs"
	"os"
)

// MaxFileSize bounds a host's file that import reads: ~/.claude.json
// keeps a history and grows to megabytes, but no host file is this large.
const MaxFileSize = 64 << 20

// maxEnvFileSize bounds a VS Code envFile, a list of NAME=value lines.
const maxEnvFileSize = 1 << 20

// ReadFile returns the content of the regular file at path, at most limit
// bytes. Anything else is refused before it is opened, with an error that
// names the file and what it is: a named pipe would block the read for
// good and a device (/dev/zero) never ends, and a cloned repository's
// files may name either. A missing file is an error that [errors.Is]
// [fs.ErrNotExist].
func ReadFile(path string, limit int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s, not a regular file: not read", path, fileKind(fi.Mode()))
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// The file opened may not be the one looked at (a rename between
	// the two): check it again, as opened.
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file: not read", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is larger than %d MiB: not read", path, limit>>20)
	}
	return data, nil
}

// fileKind names what a file that is not a regular file is.
func fileKind(m fs.FileMode) string {
	switch t := m.Type(); {
	case t&fs.ModeDir != 0:
		return "a folder"
	case t&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case t&fs.ModeCharDevice != 0, t&fs.ModeDevice != 0:
		return "a device"
	case t&fs.ModeSocket != 0:
		return "a socket"
	}
	return "a special file"
}
