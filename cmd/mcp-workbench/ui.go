package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/front"
	"github.com/mcpworkbench/mcp-workbench/internal/ui"
	"github.com/mcpworkbench/mcp-workbench/internal/workbench"
)

const uiUsage = `Usage: mcp-workbench ui [--config PATH] [--listen 127.0.0.1:0] [--no-browser]

Serves a web page on this machine that shows the toolboxes and servers of
the configuration with their live state in every running workbench of
this user (Now), searches the tools and calls one (Try), shows changed
tool definitions beside the pinned ones to approve them (Review), answers
the permission questions of hosts that cannot ask (Questions), lists the
recent calls (Activity), and signs in to remote servers (Logins).

The first line of stdout is the page's address with a secret token: every
request needs it. The page opens in the browser unless --no-browser.
It serves until interrupted (Ctrl-C).

  --listen ADDR    a loopback address and port (default 127.0.0.1:0: a free port)
  --no-browser     print the address only
` + globalFlagsHelp

func runUI(ctx context.Context, e *env, args []string) error {
	var g globalOptions
	fs := e.flagSet("ui", &g)
	listen := fs.String("listen", "127.0.0.1:0", "")
	noBrowser := fs.Bool("no-browser", false, "")
	positional, err := parse(fs, args)
	if err == nil {
		err = noArguments(positional)
	}
	if err != nil {
		return e.usageError("ui", err)
	}
	log, logOut, err := e.logger("ui", g)
	if err != nil {
		return err
	}
	path := config.ResolvePath(g.configPath, os.LookupEnv)
	s, err := ui.New(ui.Options{
		ConfigPath: path, Version: Version(), Logger: log,
		// The Try and Review pages work as the call and tools commands do.
		NewWorkbench: func(cfg *config.Config) *workbench.Workbench {
			return workbench.New(cfg, workbench.Options{Version: Version(), Logger: log, Stderr: logOut, Catalog: front.OpenCatalog(log), Pins: front.OpenPins(log)})
		},
	})
	if err != nil {
		return err
	}
	ln, err := ui.Listen(*listen)
	if err != nil {
		return e.usageError("ui", err)
	}
	url := s.URL(ln)
	fmt.Fprintln(e.stdout, url)
	log.Info("serving the web UI; Ctrl-C stops it", "address", "http://"+ln.Addr().String()+"/", "config", path)
	if !*noBrowser {
		if err := openBrowser(url); err != nil {
			log.Warn("could not open a browser; open the address printed above", "error", err)
		}
	}
	return s.Serve(ctx, ln)
}

// openBrowser opens url in the user's browser, without waiting for it.
func openBrowser(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait() //nolint:errcheck // reaped; its outcome is the browser's
	return nil
}
