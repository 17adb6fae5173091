package front

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/shared"
)

// Running is one shared workbench found by [FindShared].
type Running struct {
	Socket string
	Status Status
}

// FindShared asks every shared workbench of the user for its status;
// sockets no one answers at are left to the next start to clean up.
func FindShared(ctx context.Context, version string) ([]Running, error) {
	if !shared.Supported() {
		return nil, errors.New("sharing is not supported on this system: every session runs its own servers")
	}
	dir, err := shared.Dir()
	if err != nil {
		return nil, err
	}
	socks, err := shared.Sockets(dir)
	if err != nil {
		return nil, err
	}
	var found []Running
	for _, sock := range socks {
		reply, err := Ask(ctx, sock, shared.KindStatus, version)
		if err != nil {
			continue // stale: its workbench is gone
		}
		var st Status
		if err := json.Unmarshal(reply.Status, &st); err != nil {
			continue
		}
		found = append(found, Running{Socket: sock, Status: st})
	}
	return found, nil
}

// Ask sends a status or stop hello (kind) to the shared workbench at sock,
// as a client of the given version, and returns its reply.
func Ask(ctx context.Context, sock, kind, version string) (*shared.Reply, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := shared.Dial(ctx, sock)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(sharedAnswerTimeout))
	if err := shared.WriteLine(conn, shared.Hello{Protocol: shared.Protocol, Version: version, Kind: kind, PID: os.Getpid()}); err != nil {
		return nil, err
	}
	var reply shared.Reply
	if err := shared.ReadLine(bufio.NewReader(conn), &reply); err != nil {
		return nil, err
	}
	if !reply.OK {
		return nil, errors.New(reply.Error)
	}
	return &reply, nil
}
