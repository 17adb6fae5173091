package ui

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
)

// docsShots makes the browser tests write their screenshots at a desktop
// and a phone width into docs/ as well (docs/ui.md shows them).
var docsShots = flag.Bool("docs-shots", false, "write the pages' screenshots into docs/ too")

// chromiumPath finds Debian's chromium (or $CHROMIUM). Without it the test
// fails under CI and is skipped elsewhere, with how to install it.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "chromium is not installed: apt-get install chromium (or set CHROMIUM to a Chromium or Chrome)"
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// browser starts a headless Chromium with a fresh profile for the test,
// at a desktop's size, and returns its tab's context.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.WindowSize(1280, 800),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	// The whole test's bound: a busy machine is slow, a hang still ends.
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() {
		cancelTimeout()
		cancel()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

// open loads the page as the user does: the printed address, with its
// token, which the page trades for a cookie; then the page named by hash.
func (u *uiTest) open(ctx context.Context, hash string) {
	u.t.Helper()
	u.run(ctx, chromedp.Navigate(u.base+"/?token="+u.s.Token()+"#"+hash), chromedp.WaitVisible(chromedp.CSS("#"+hash)))
}

// run runs actions in the browser; an error ends the test.
func (u *uiTest) run(ctx context.Context, actions ...chromedp.Action[chromedp.Void]) {
	u.t.Helper()
	actx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(actx, actions...); err != nil {
		path := filepath.Join(fakeserver.RepoRoot(u.t), "bin", "ui-screenshots", strings.ReplaceAll(u.t.Name(), "/", "_")+"-failed.png")
		if png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil && os.MkdirAll(filepath.Dir(path), 0o755) == nil {
			os.WriteFile(path, png, 0o644)
		}
		u.t.Fatalf("in the browser: %v (the page then: %s)", err, path)
	}
}

// text is the visible text of the element sel selects.
func (u *uiTest) text(ctx context.Context, sel string) string {
	u.t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		u.t.Fatalf("in the browser, the text of %s: %v", sel, err)
	}
	return s
}

// shot saves screenshots of the whole page at a desktop and a phone width
// as test artefacts in bin/ui-screenshots (NAME-desktop.png,
// NAME-phone.png; with -docs-shots into docs/ too, as
// ui-NAME-desktop.png and ui-NAME-phone.png), and fails the test if the
// page is wider than a phone's screen there: readable at a phone's width
// means no sideways scrolling.
func (u *uiTest) shot(ctx context.Context, name string) {
	u.t.Helper()
	root := fakeserver.RepoRoot(u.t)
	save := func(png []byte, path string) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			u.t.Fatal(err)
		}
		if err := os.WriteFile(path, png, 0o644); err != nil {
			u.t.Fatal(err)
		}
	}
	for _, size := range []struct {
		name string
		w, h int64
	}{{"desktop", 1280, 800}, {"phone", 390, 844}} {
		u.run(ctx, chromedp.EmulateViewport(size.w, size.h))
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			u.t.Fatalf("screenshot: %v", err)
		}
		save(png, filepath.Join(root, "bin", "ui-screenshots", name+"-"+size.name+".png"))
		if *docsShots {
			save(png, filepath.Join(root, "docs", "ui-"+name+"-"+size.name+".png"))
		}
		wide, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
		if err != nil {
			u.t.Fatal(err)
		}
		if wide > int(size.w) {
			u.t.Errorf("the %s page is %d pixels wide at a %s's width of %d: it scrolls sideways", name, wide, size.name, size.w)
		}
	}
	u.run(ctx, chromedp.EmulateViewport(1280, 800))
}
