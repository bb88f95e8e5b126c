package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/alecthomas/kong"
)

// commandPaths are the paths of every command of the CLI ("dev",
// "subscriptions", "subscriptions list", …).
func commandPaths(t *testing.T) [][]string {
	t.Helper()
	parser, err := kong.New(&cli{})
	if err != nil {
		t.Fatal(err)
	}
	var paths [][]string
	var walk func(n *kong.Node, path []string)
	walk = func(n *kong.Node, path []string) {
		for _, c := range n.Children {
			if c.Type != kong.CommandNode {
				continue
			}
			p := append(append([]string(nil), path...), c.Name)
			paths = append(paths, p)
			walk(c, p)
		}
	}
	walk(parser.Model.Node, nil)
	return paths
}

// connCounter is a TCP listener that counts and closes the connections it
// is offered: every address a command could reach points at it.
type connCounter struct {
	ln    net.Listener
	conns atomic.Int64
}

func newConnCounter(t *testing.T) *connCounter {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &connCounter{ln: ln}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			c.conns.Add(1)
			_ = conn.Close()
		}
	}()
	t.Cleanup(func() { _ = ln.Close() })
	return c
}

// TestHelpStartsNothing: issue 24. `--help` (and -h, and `hookrelay help
// COMMAND`) on every command prints that command's help and succeeds
// without running it: no connection to any address the configuration
// names (API, Temporal, PostgreSQL, metrics), no data directory made (dev
// makes it first), no receiver listening. Before kong, `hookrelay dev
// --help` started the whole stack.
func TestHelpStartsNothing(t *testing.T) {
	counter := newConnCounter(t)
	addr := counter.ln.Addr().String()
	dataDir := filepath.Join(t.TempDir(), "data")
	vars := env(map[string]string{"HOOKRELAY_URL": "http://" + addr, "HOOKRELAY_HTTP_ADDR": addr,
		"TEMPORAL_ADDRESS": addr, "DATABASE_URL": "postgres://x@" + addr + "/x?sslmode=disable",
		"HOOKRELAY_METRICS_ADDR": addr, "HOOKRELAY_DATA_DIR": dataDir, "HOOKRELAY_INSECURE_NO_AUTH": "true"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // a command that ran anyway would stop at once
	paths := commandPaths(t)
	if len(paths) < 40 {
		t.Fatalf("only %d commands found", len(paths))
	}
	for _, path := range paths {
		for _, args := range [][]string{slices.Concat(path, []string{"--help"}), slices.Concat(path, []string{"-h"}), slices.Concat([]string{"help"}, path)} {
			var out, errOut bytes.Buffer
			err := run(ctx, args, vars, &out, &errOut)
			if err != nil || !strings.HasPrefix(out.String(), "Usage: hookrelay "+strings.Join(path, " ")) {
				t.Errorf("%q: %v; printed %.200q", args, err, out.String())
			}
			if strings.Contains(out.String(), "receiving webhooks") {
				t.Errorf("%q started a receiver", args)
			}
		}
	}
	if n := counter.conns.Load(); n != 0 {
		t.Errorf("%d connections made while printing help", n)
	}
	if _, err := os.Stat(dataDir); !os.IsNotExist(err) {
		t.Errorf("the data dir was made (%v): dev ran", err)
	}
}
