package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// runReceive serves a webhook receiver for trying hookrelay out: it prints
// every request it gets and answers 200, or --status to the first --fail
// requests.
func runReceive(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("receive", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:9000", "address to listen on")
	fail := fs.Int("fail", 0, "answer the first N requests with --status")
	status := fs.Int("status", http.StatusServiceUnavailable, "status code of the failing answers")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("receive: %w", err)
	}
	fmt.Fprintf(stdout, "receiving webhooks on http://%s/\n", ln.Addr())
	var mu sync.Mutex
	seen := 0
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		mu.Lock()
		defer mu.Unlock()
		seen++
		code := http.StatusOK
		if seen <= *fail {
			code = *status
		}
		fmt.Fprintf(stdout, "%s %s %s attempt=%s -> %d\n%s\n", time.Now().Format(time.RFC3339),
			r.Method, r.URL.Path, r.Header.Get("X-Hookrelay-Attempt"), code, body)
		w.WriteHeader(code)
	})
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && ctx.Err() == nil {
		return fmt.Errorf("receive: %w", err)
	}
	return nil
}
