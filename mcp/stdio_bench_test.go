package mcp

import (
	"bufio"
	"context"
	"io"
	"os"
	"strconv"
	"testing"
)

// BenchmarkStdioCall is tools/call of a typed echo tool over the stdio
// framing on OS pipes, lock-step and with 16 calls in flight; it reports
// the process's CPU per call (the machine may be shared: compare the
// minimum of several runs).
func BenchmarkStdioCall(b *testing.B) {
	for _, depth := range []int{1, 16} {
		b.Run("inflight="+strconv.Itoa(depth), func(b *testing.B) {
			srv := NewServer(Implementation{Name: "bench", Version: "1"}, nil)
			if err := AddTool(srv, &Tool{Name: "echo"}, func(ctx context.Context, r *CallToolRequest, in EchoIn) (string, error) {
				return in.Text, nil
			}); err != nil {
				b.Fatal(err)
			}
			inR, inW, _ := os.Pipe()
			outR, outW, _ := os.Pipe()
			lg, _ := quietLogger()
			done := make(chan error, 1)
			go func() {
				done <- ServeConn(context.Background(), srv, newTestLines(inR, outW, DefaultMaxBodyBytes), &ConnOptions{Logger: lg})
				outW.Close()
			}()
			w := bufio.NewWriter(inW)
			r := bufio.NewReaderSize(outR, 64<<10)
			send := func(line string) {
				w.WriteString(line)
				w.WriteByte('\n')
				w.Flush()
			}
			read := func() []byte {
				l, err := r.ReadSlice('\n')
				if err != nil {
					b.Fatal(err)
				}
				return l
			}
			send(initBody("2025-11-25", "{}"))
			read()
			send(note("notifications/initialized", ""))
			call := toolCall("7", "echo", `{"text":"hello"}`)
			tokens := make(chan struct{}, depth)
			b.ReportAllocs()
			cpu0, _ := processCPU()
			b.ResetTimer()
			go func() {
				for range b.N {
					tokens <- struct{}{}
					send(call)
				}
			}()
			for range b.N {
				read()
				<-tokens
			}
			b.StopTimer()
			if cpu1, ok := processCPU(); ok {
				b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
			}
			inW.Close()
			if err := <-done; err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, outR)
			inR.Close()
			outR.Close()
		})
	}
}
