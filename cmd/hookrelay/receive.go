package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// receiveCmd is `hookrelay receive`: a webhook receiver for trying
// hookrelay out. It prints every request it gets and answers 200, or
// --status to the first --fail requests.
type receiveCmd struct {
	Addr   string `default:"127.0.0.1:9000" placeholder:"HOST:PORT" help:"Address to listen on (default ${default})."`
	Fail   int    `default:"0" placeholder:"N" help:"Answer the first N requests with --status."`
	Status int    `default:"503" placeholder:"CODE" help:"Status code of the failing answers (default ${default})."`
}

// Run serves the receiver until the context ends.
func (r *receiveCmd) Run(e *session) error {
	return runReceive(e.ctx, *r, e.stdout)
}

func runReceive(ctx context.Context, opts receiveCmd, stdout io.Writer) error {
	ln, err := net.Listen("tcp", opts.Addr)
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
		if seen <= opts.Fail {
			code = opts.Status
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
