package config

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// defaultDebounce is how long [Watch] waits after the last event of a
// burst before it loads the file: editors write a file in several steps
// (truncate, write, chmod; or write a temporary file, rename it, delete a
// backup), and one save must make one reload.
const defaultDebounce = 200 * time.Millisecond

// WatchOptions tune [Watch]. The zero value is ready to use.
type WatchOptions struct {
	// Debounce is the quiet time after the last event before a reload;
	// 0 means defaultDebounce.
	Debounce time.Duration
	// Lookup expands ${VAR} references; nil means the process environment,
	// as [Load].
	Lookup LookupFunc
	// Loaded, if set, is the configuration in use, read before the watch
	// began: an edit made in between is reloaded at once.
	Loaded *Config

	// afterReload, if set, is told after each reload whether it called
	// onChange (tests wait on it instead of sleeping).
	afterReload func(called bool)
}

// Watcher watches a configuration file; see [Watch].
type Watcher struct {
	fw     *fsnotify.Watcher
	cancel context.CancelFunc
	done   chan struct{}
}

// Watch calls onChange each time the configuration file at path changes,
// until ctx ends or [Watcher.Close] is called. It watches the file's
// folder, not the file, so that it keeps working when an editor replaces
// the file by renaming a new one over it or deletes and creates it again
// (watching the file itself would follow the old, renamed-away inode);
// events for other names in the folder are ignored. If path is a symbolic
// link, the folder of the file it points to is watched as well.
//
// A burst of events (one save is several) makes one reload, after
// opts.Debounce without events. The file is then loaded as [LoadWith]
// loads it, and onChange gets the new configuration, or the error — for a
// configuration that does not validate, a *[Error] listing every problem
// with its JSON path — and nil; the caller then keeps serving the
// configuration it has. A save that leaves the bytes as they were at the
// last reload calls nothing. With opts.Loaded, the file is compared with
// it as soon as the watch begins, and an edit made in between is reloaded;
// without, the first event after Watch starts always reloads (the file may
// have changed since the caller loaded it).
// Errors of the watch itself come to onChange too, wrapped, with a nil
// configuration; after a lost-events overflow the file is reloaded.
//
// onChange is called from one goroutine, one call at a time; it must not
// call Close. Watch returns once the folder is watched: a write made after
// it returns is seen.
func Watch(ctx context.Context, path string, opts WatchOptions, onChange func(*Config, error)) (*Watcher, error) {
	if opts.Debounce <= 0 {
		opts.Debounce = defaultDebounce
	}
	if opts.Lookup == nil {
		opts.Lookup = os.LookupEnv
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("watching %s: %w", path, err)
	}
	names := map[string]bool{abs: true}
	if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
		names[real] = true
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watching %s: %w", path, err)
	}
	dirs := map[string]bool{}
	for name := range names {
		dirs[filepath.Dir(name)] = true
	}
	for dir := range dirs {
		if err := fw.Add(dir); err != nil {
			fw.Close()
			return nil, fmt.Errorf("watching the folder of %s: %w", path, err)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &Watcher{fw: fw, cancel: cancel, done: make(chan struct{})}
	go w.loop(ctx, path, names, opts, onChange)
	return w, nil
}

// Close stops watching and waits until a call of onChange in progress has
// returned. It may be called more than once. Ending Watch's context stops
// the watch too (Close then only waits).
func (w *Watcher) Close() {
	w.cancel()
	<-w.done
}

func (w *Watcher) loop(ctx context.Context, path string, names map[string]bool, opts WatchOptions, onChange func(*Config, error)) {
	defer close(w.done)
	defer w.fw.Close()
	timer := time.NewTimer(opts.Debounce)
	timer.Stop()
	defer timer.Stop()
	var last []byte // the bytes of the last reload; nil before the first or after a failed read
	reload := func() bool {
		cfg, data, err := loadFile(path, opts.Lookup)
		if data != nil && last != nil && bytes.Equal(data, last) {
			return false
		}
		last = data
		onChange(cfg, err)
		return true
	}
	if opts.Loaded != nil {
		// The file as it is now that every edit is seen, against the one
		// in use.
		cfg, data, err := loadFile(path, opts.Lookup)
		last = data
		called := err != nil
		if !called {
			ch := Diff(opts.Loaded, cfg)
			called = !ch.Empty()
		}
		if called {
			onChange(cfg, err)
		}
		if opts.afterReload != nil {
			opts.afterReload(called)
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.fw.Events:
			if !ok {
				return
			}
			if relevant(ev, names) {
				timer.Reset(opts.Debounce)
			}
		case err, ok := <-w.fw.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				timer.Reset(opts.Debounce) // events were lost: look at the file
				continue
			}
			onChange(nil, fmt.Errorf("watching %s: %w", path, err))
		case <-timer.C:
			called := reload()
			if opts.afterReload != nil {
				opts.afterReload(called)
			}
		}
	}
}

// relevant reports whether ev may have changed the file's content: a
// write, create, remove or rename of one of names (the file, and what it
// links to). Chmod alone (touch, some editors) leaves the content as it was.
func relevant(ev fsnotify.Event, names map[string]bool) bool {
	return names[filepath.Clean(ev.Name)] && ev.Op&(fsnotify.Write|fsnotify.Create|fsnotify.Remove|fsnotify.Rename) != 0
}
