package hostconfig

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/mcpworkbench/mcp-workbench/internal/userfile"
)

// maxHostFile bounds a host file install reads: Claude Code's ~/.claude.json
// grows with its history, but not to this.
const maxHostFile = 64 << 20

// Installed says what [EditFile] did.
type Installed struct {
	Path    string // the file written (a symbolic link's target)
	Backup  string // the copy of the file as it was; "" if none was made
	Created bool   // the file did not exist
	Changed bool   // false: the file already held the entry, nothing written
	// InPlace: the file has other hard links, and was written in place
	// (so that every link sees the change) rather than replaced.
	InPlace bool
}

// maxLinks bounds the symbolic links followed to a host's file.
const maxLinks = 40

// linkTarget returns the file that path names once symbolic links are
// followed, one after another, also to a target that does not exist yet
// (a dotfiles link made before its file): that file is written, and the
// links stay.
func linkTarget(path string) (string, error) {
	orig := path
	for range maxLinks {
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return path, nil
		}
		dest, err := os.Readlink(path)
		if err != nil {
			return "", fmt.Errorf("%s: reading the symbolic link: %w", path, err)
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(path), dest)
		}
		path = dest
	}
	return "", fmt.Errorf("%s: more than %d symbolic links in a row (a loop?): nothing written", orig, maxLinks)
}

// EditFile applies edit to the file at path and writes the result: only
// if it changed, after copying the file as it was beside it (path.bak, or
// path.bak.2, … when that is taken, so that the user's first backup is
// never replaced), atomically (a reader sees the old file or the new
// one), keeping the file's mode. A new file is 0600 in a folder made
// 0700. A symbolic link (dotfiles) is followed: the file it points at is
// edited (or made), the link stays. A file with other hard links is
// written in place, after the backup, so that the links stay one file. A
// read-only file (no write permission for its owner) is refused: the user
// made it so. A file that edit cannot parse is left as it is.
func EditFile(path string, edit func([]byte) ([]byte, bool, error)) (Installed, error) {
	path, err := linkTarget(path)
	if err != nil {
		return Installed{}, err
	}
	res := Installed{Path: path}
	data, info, err := userfile.Read(path, maxHostFile)
	mode := os.FileMode(0o600)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		res.Created = true
	case err != nil:
		return res, fmt.Errorf("%s: %v", path, err)
	default:
		mode = info.Mode().Perm()
	}
	out, changed, err := edit(data)
	if err != nil {
		return res, fmt.Errorf("%s: %w (the file is unchanged)", path, err)
	}
	if !changed || bytes.Equal(out, data) {
		return res, nil
	}
	if !res.Created && mode&0o200 == 0 {
		return res, fmt.Errorf("%s is read-only (mode %04o): install does not write a file made read-only; make it writable (chmod u+w) and run install again, or add the entry by hand (install --print shows it); the file is unchanged", path, mode)
	}
	if res.Created {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return res, fmt.Errorf("making the folder of %s: %w", path, err)
		}
	} else {
		if res.Backup, err = backup(path, data, mode); err != nil {
			return res, err
		}
	}
	if !res.Created && hardLinks(info) > 1 {
		// A rename would leave the other links with the old file.
		res.InPlace = true
		if err := writeInPlace(path, out); err != nil {
			return res, fmt.Errorf("writing %s in place (it has other hard links; the file as it was: %s): %w", path, res.Backup, err)
		}
	} else if err := userfile.WriteAtomicMode(path, "."+filepath.Base(path)+".*.tmp", out, mode); err != nil {
		return res, fmt.Errorf("writing %s: %w", path, err)
	}
	res.Changed = true
	return res, nil
}

// writeInPlace writes data over the file at path, which keeps its inode
// and so its other hard links, and syncs it.
func writeInPlace(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// backup writes data to the first free name of path.bak, path.bak.2, ….
func backup(path string, data []byte, mode os.FileMode) (string, error) {
	for n := 1; n < 1000; n++ {
		name := path + ".bak"
		if n > 1 {
			name += "." + strconv.Itoa(n)
		}
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("backing up %s: %w", path, err)
		}
		_, err = f.Write(data)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(name)
			return "", fmt.Errorf("backing up %s: %w", path, err)
		}
		return name, nil
	}
	return "", fmt.Errorf("backing up %s: %s.bak to .bak.999 are all taken", path, path)
}

// Install writes the entry of host h for the server name into the file at
// path (h's user file if path is ""): the one member or table, nothing
// else.
func Install(h *Host, path, name string, entry Entry) (Installed, error) {
	res, _, err := InstallRemoving(h, path, name, entry, nil)
	return res, err
}

// InstallRemoving is [Install] that also takes out of the file, in the
// same write, the host's servers named in moved (those now in the
// workbench's toolboxes): from a JSON file their members are removed,
// in Codex's TOML their tables are commented out, so that each can be
// brought back. It returns the names it took out; the entry name itself
// is never one. Each of more edits the file further, in the same write
// (Codex's hook, for one).
func InstallRemoving(h *Host, path, name string, entry Entry, moved []string, more ...func([]byte) ([]byte, bool, error)) (Installed, []string, error) {
	if path == "" {
		path = h.UserFile()
		if path == "" {
			return Installed{}, nil, fmt.Errorf("cannot find %s's file: the home folder is unknown (give --file)", h.Title)
		}
	}
	var others []string
	for _, m := range moved {
		if m != name {
			others = append(others, m)
		}
	}
	var removed []string
	res, err := EditFile(path, func(data []byte) ([]byte, bool, error) {
		out, changed, err := installEdit(h, name, entry, others, &removed)(data)
		if out == nil && !changed {
			out = data
		}
		for _, edit := range more {
			if err != nil {
				break
			}
			var c bool
			out, c, err = edit(out)
			changed = changed || c
		}
		return out, changed, err
	})
	return res, removed, err
}

// installEdit is the edit of InstallRemoving: the entry, and the servers
// in others taken out (their names into removed).
func installEdit(h *Host, name string, entry Entry, others []string, removed *[]string) func([]byte) ([]byte, bool, error) {
	return func(data []byte) ([]byte, bool, error) {
		var out []byte
		var changed bool
		var err error
		if h.TOML {
			out, changed, err = SetTOMLTable(data, append(append([]string{}, h.Container...), name), entry)
		} else {
			out, changed, err = SetJSONMember(data, h.Container, name, entry)
		}
		if err != nil || len(others) == 0 {
			return out, changed, err
		}
		if h.TOML {
			out, *removed, err = CommentOutTOMLTables(out, h.Container, others)
		} else {
			out, *removed, err = RemoveJSONMembers(out, h.Container, others)
		}
		return out, changed || len(*removed) > 0, err
	}
}
