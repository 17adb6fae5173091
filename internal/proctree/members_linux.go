package proctree

import (
	"bytes"
	"os"
	"strconv"
)

// hasLiveMember scans /proc for a process of group pgid that is not a zombie.
func hasLiveMember(pgid int) bool {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true // cannot tell: assume alive, as kill(2) said
	}
	want := []byte(strconv.Itoa(pgid))
	for _, e := range entries {
		name := e.Name()
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		stat, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		state, pgrp, ok := parseStat(stat)
		if ok && state != 'Z' && state != 'X' && bytes.Equal(pgrp, want) {
			return true
		}
	}
	return false
}

// parseStat returns the state and process group of a /proc/PID/stat line:
// "PID (COMM) STATE PPID PGRP ...", where COMM may hold spaces and parentheses.
func parseStat(stat []byte) (state byte, pgrp []byte, ok bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, nil, false
	}
	f := bytes.Fields(stat[i+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, nil, false
	}
	return f[0][0], f[2], true
}
