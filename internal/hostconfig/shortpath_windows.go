package hostconfig

import "golang.org/x/sys/windows"

// shortPath returns the 8.3 short form of the existing path p (C:\PROGRA~1\…),
// or p when the volume keeps no short names or p does not exist.
func shortPath(p string) string {
	long, err := windows.UTF16PtrFromString(p)
	if err != nil {
		return p
	}
	buf := make([]uint16, 260)
	for {
		n, err := windows.GetShortPathName(long, &buf[0], uint32(len(buf)))
		if err != nil || n == 0 {
			return p
		}
		if int(n) <= len(buf) {
			return windows.UTF16ToString(buf[:n])
		}
		buf = make([]uint16, n)
	}
}
