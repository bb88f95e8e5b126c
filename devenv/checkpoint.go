package devenv

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	_ "modernc.org/sqlite" // the SQLite driver of checkpoints' own connection
)

// checkpointEvery is how often the checkpointer copies the dev server's
// write-ahead log back into its database file.
const checkpointEvery = 100 * time.Millisecond

// checkpointer runs the checkpoints of a file-backed dev server's SQLite
// log from a connection of its own, in this process.
//
// The dev server reaches its database through one connection. When SQLite
// checkpoints automatically, it does so in that connection, right after the
// commit that filled the log, and the checkpoint ends with a sync of the
// database file: tens of milliseconds during which no workflow of the server
// makes progress (docs/operations.md#the-dev-servers-sqlite-runs-in-wal-mode).
// A passive checkpoint from another connection does the same copying and
// syncing while the server goes on writing to the log: it takes no lock a
// writer waits for. The server keeps its own automatic checkpoint
// (sqlitePragmas): when the log still reaches its threshold, what is left to
// copy then is what the server wrote since this one's last checkpoint.
type checkpointer struct {
	db     *sql.DB
	logger *slog.Logger
	cancel context.CancelFunc
	done   chan struct{}
}

// startCheckpoints opens dbFile and checkpoints its log every interval
// until stop.
func startCheckpoints(dbFile string, every time.Duration, logger *slog.Logger) (*checkpointer, error) {
	dsn := (&url.URL{Scheme: "file", Opaque: dbFile}).String()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open %s for checkpoints: %w", dbFile, err)
	}
	db.SetMaxOpenConns(1)
	ctx, cancel := context.WithCancel(context.Background())
	c := &checkpointer{db: db, logger: logger, cancel: cancel, done: make(chan struct{})}
	if err := c.checkpoint(ctx); err != nil {
		cancel()
		_ = db.Close()
		return nil, err
	}
	go c.run(ctx, every)
	return c, nil
}

// run checkpoints every interval until ctx ends.
func (c *checkpointer) run(ctx context.Context, every time.Duration) {
	defer close(c.done)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if err := c.checkpoint(ctx); err != nil && ctx.Err() == nil {
			c.logger.Warn("temporal_checkpoint_failed", "err", err)
		}
	}
}

// checkpoint copies into the database file the pages of the log no reader
// still needs, and syncs it. A complete one lets the server's next commit
// start the log again from its beginning, but only when nothing reads the
// log at that instant: measured at 50 deliveries a second, these completed
// every time and the log still grew to the server's threshold between its
// restarts, where the server's own checkpoint had only what was written
// since this one's to copy.
func (c *checkpointer) checkpoint(ctx context.Context) error {
	if _, err := c.db.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)"); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// stop ends the checkpoints and closes the connection.
func (c *checkpointer) stop() {
	if c == nil {
		return
	}
	c.cancel()
	<-c.done
	_ = c.db.Close()
}
