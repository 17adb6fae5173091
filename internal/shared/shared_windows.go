package shared

import (
	"context"
	"errors"
	"net"
)

// On Windows the workbench does not share: each host's workbench runs its
// own servers, as before.
const supported = false

var errWindows = errors.New("sharing a workbench is not supported on Windows")

// Listen is not supported on Windows.
func Listen(path string, opts ListenOptions) (net.Listener, error) { return nil, errWindows }

// Dial is not supported on Windows.
func Dial(ctx context.Context, path string) (net.Conn, error) { return nil, errWindows }

// StartDetached is not supported on Windows.
func StartDetached(exe string, args, env []string, logPath string) (<-chan error, error) {
	return nil, errWindows
}

// RotateLog has nothing to do on Windows, where no daemon runs.
func RotateLog(path string) (bool, error) { return false, nil }
