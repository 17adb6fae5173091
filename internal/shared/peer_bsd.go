//go:build darwin || freebsd

package shared

import "golang.org/x/sys/unix"

const supported = true

// fdPeerUID is getpeereid(3), which these systems build on LOCAL_PEERCRED.
func fdPeerUID(fd int) (int, error) {
	cred, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		return -1, err
	}
	return int(cred.Uid), nil
}
