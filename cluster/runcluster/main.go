// Command runcluster runs hookrelay's production-shaped stack on this machine
// until Ctrl-C (`make run-cluster`): PostgreSQL, the Temporal server on it
// with 4 history shards, the Temporal Web UI, `hookrelay setup`, one
// `hookrelay api` and two `hookrelay worker` processes.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/hookrelay/hookrelay/cluster"
)

func main() {
	dir := flag.String("dir", ".hookrelay-cluster", "data and logs")
	workers := flag.Int("workers", 2, "hookrelay worker processes")
	api := flag.String("api", "127.0.0.1:8080", "where hookrelay api listens")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *dir, *workers, *api); err != nil {
		fmt.Fprintln(os.Stderr, "run-cluster:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, dir string, workers int, api string) error {
	cfg, err := cluster.Defaults(dir)
	if err != nil {
		return err
	}
	cfg.Workers, cfg.APIAddr = workers, api
	cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	c, err := cluster.Start(ctx, cfg)
	if err != nil {
		return err
	}
	defer c.Stop()
	fmt.Printf(`hookrelay is running on a Temporal cluster
  API:             %s
  Temporal Web UI: %s
  Temporal:        %s (PostgreSQL persistence, %d history shards)
  PostgreSQL:      %s
  workers:         %d processes
  logs:            %s/*.log
%s
Press Ctrl-C to stop.
`, c.API, c.UI, c.Temporal, cfg.Shards, c.PG.URL, workers, cfg.Dir, cluster.OpenNote(cfg))
	<-ctx.Done()
	fmt.Println("stopping")
	return nil
}
