package workbench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/mcpworkbench/mcp-workbench/internal/config"
	"github.com/mcpworkbench/mcp-workbench/internal/downstream"
	"github.com/mcpworkbench/mcp-workbench/internal/fakeserver"
)

// BenchmarkRelay makes use_tool calls one after another through a
// workbench in this process to a fake server process, over OS pipes as a
// host's stdio: what the workbench allocates per proxied call, and whether
// its heap and goroutines stay flat however many calls it relays. The
// host here writes and reads lines itself and allocates nothing per call,
// so allocs/op are the workbench's. make bench runs it 100,000 times.
func BenchmarkRelay(b *testing.B) {
	exe, _ := os.Executable()
	cfgText := fmt.Sprintf(`{"toolboxes": {"dev": {"description": "d", "mcpServers": {"a": {"command": %q, "env": {%q: "1", %q: "a"}}}}}}`,
		exe, fakeserver.EnvServer, fakeserver.EnvName)
	cfg, err := config.Parse([]byte(cfgText), os.LookupEnv)
	if err != nil {
		b.Fatal(err)
	}
	wb := New(cfg, Options{Version: "bench", Logger: slog.New(slog.DiscardHandler), Downstream: &downstream.Options{StopGrace: 500 * time.Millisecond}})
	defer wb.Close()
	hostR, wbW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	wbR, hostW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	ss, err := wb.Connect(context.Background(), wbR, wbW)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		hostW.Close()
		ss.Close()
		wbR.Close()
		wbW.Close()
		hostR.Close()
	}()
	in := bufio.NewReaderSize(hostR, 64<<10)
	readLine := func() []byte {
		line, err := in.ReadSlice('\n')
		if err != nil {
			b.Fatalf("reading the workbench's answer: %v", err)
		}
		return line
	}
	write := func(line []byte) {
		if _, err := hostW.Write(line); err != nil {
			b.Fatal(err)
		}
	}
	write([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}` + "\n"))
	readLine()
	write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))

	head := []byte(`{"jsonrpc":"2.0","id":`)
	tail := []byte(`,"method":"tools/call","params":{"name":"use_tool","arguments":{"tool":{"toolbox":"dev","server":"a","tool":"echo"},"arguments":{"text":"` + string(bytes.Repeat([]byte("x"), 64)) + `"}}}}` + "\n")
	buf := make([]byte, 0, 512)
	want := make([]byte, 0, 64)
	call := func(id int) {
		buf = append(strconv.AppendInt(append(buf[:0], head...), int64(id), 10), tail...)
		write(buf)
		want = append(strconv.AppendInt(append(want[:0], head...), int64(id), 10), ',')
		line := readLine()
		if !bytes.HasPrefix(line, want) || bytes.Contains(line, []byte(`"isError":true`)) {
			b.Fatalf("call %d: unexpected answer %.300s", id, line)
		}
	}
	for i := range 200 { // start the server, warm up
		call(i + 1)
	}
	heap := func() float64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return float64(ms.HeapAlloc) / (1 << 20)
	}
	goroutines := runtime.NumGoroutine()
	heapStart := heap()
	var heapQuarter float64
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		call(1000 + i)
		if i == b.N/4 {
			b.StopTimer()
			heapQuarter = heap()
			b.StartTimer()
		}
	}
	b.StopTimer()
	b.ReportMetric(heapStart, "heap-MiB-at-start")
	b.ReportMetric(heapQuarter, "heap-MiB-at-25%")
	b.ReportMetric(heap(), "heap-MiB-at-end")
	b.ReportMetric(float64(goroutines), "goroutines-at-start")
	b.ReportMetric(float64(runtime.NumGoroutine()), "goroutines-at-end")
}
