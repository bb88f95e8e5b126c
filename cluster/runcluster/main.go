// Command runcluster runs hookrelay's production-shaped stack on this machine
// until Ctrl-C (`make run-cluster`): PostgreSQL; a Temporal cluster on it
// with 16 history shards, one process per service (frontend, matching, two
// history hosts, the internal worker service); the Temporal Web UI;
// `hookrelay setup`; two `hookrelay api` and two `hookrelay worker`
// processes. It prints every process with its pid (also in the data
// directory's pids/ folder).
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/hookrelay/hookrelay/cluster"
)

func main() {
	dir := flag.String("dir", ".hookrelay-cluster", "data, logs and pid files")
	workers := flag.Int("workers", 2, "hookrelay worker processes")
	apis := flag.Int("apis", 2, "hookrelay api processes")
	api := flag.String("api", "127.0.0.1:8080", "where the first hookrelay api listens")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *dir, *workers, *apis, *api); err != nil {
		fmt.Fprintln(os.Stderr, "run-cluster:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, dir string, workers, apis int, api string) error {
	cfg, err := cluster.Defaults(dir)
	if err != nil {
		return err
	}
	cfg.Workers, cfg.APIs, cfg.APIAddr = workers, apis, api
	cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	c, err := cluster.Start(ctx, cfg)
	if err != nil {
		return err
	}
	defer c.Stop()
	fmt.Printf(`hookrelay is running on a Temporal cluster
  API:             %s
  Temporal Web UI: %s
  Temporal:        %s (the frontend; PostgreSQL persistence, %d history shards on 2 history hosts)
  PostgreSQL:      %s
  logs:            %s/NAME.log; pids in %s/pids/NAME.pid
  processes:
%s%s
Press Ctrl-C to stop.
`, strings.Join(c.APIs, ", "), c.UI, c.Temporal, cfg.Shards, c.PG.URL, cfg.Dir, cfg.Dir, processes(c), cluster.OpenNote(cfg))
	<-ctx.Done()
	fmt.Println("stopping")
	return nil
}

// processes is the banner's table of processes.
func processes(c *cluster.Cluster) string {
	var b strings.Builder
	for _, p := range c.Processes() {
		addr := p.Addr
		if p.Membership != 0 {
			addr += fmt.Sprintf(" (membership port %d)", p.Membership)
		}
		fmt.Fprintf(&b, "    %-16s pid %-8d %s\n", p.Name, p.Pid, addr)
	}
	return b.String()
}
