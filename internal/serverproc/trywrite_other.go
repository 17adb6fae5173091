//go:build !unix

package serverproc

import "io"

// TryWriter returns nil here: a pipe write may block, so every frame goes
// through the writer's own goroutine.
func TryWriter(io.Writer) func([]byte) (int, error) { return nil }
