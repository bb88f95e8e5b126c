package devenv

import (
	"database/sql"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCheckpointsCopyTheLog: with the writer's own checkpoints off, pages
// reach the database file only through the checkpointer, while the writer
// keeps its connection (closing the last one would checkpoint too).
func TestCheckpointsCopyTheLog(t *testing.T) {
	file := filepath.Join(t.TempDir(), "t.db")
	w, err := sql.Open("sqlite", "file:"+file+"?_pragma=journal_mode(wal)&_pragma=wal_autocheckpoint(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.SetMaxOpenConns(1)
	mustExec(t, w, "CREATE TABLE t (v TEXT)")
	for range 64 {
		mustExec(t, w, "INSERT INTO t VALUES (?)", strings.Repeat("x", 16<<10))
	}
	if size := fileSize(t, file); size >= 1<<20 {
		t.Fatalf("the database file holds %d bytes before any checkpoint; want the rows still in the log", size)
	}
	c, err := startCheckpoints(file, 10*time.Millisecond, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer c.stop()
	for deadline := time.Now().Add(10 * time.Second); fileSize(t, file) < 1<<20; {
		if time.Now().After(deadline) {
			t.Fatalf("the database file holds %d bytes after 10 s of checkpoints; want the 1 MB of rows", fileSize(t, file))
		}
		time.Sleep(10 * time.Millisecond)
	}
	mustExec(t, w, "INSERT INTO t VALUES ('after')") // the writer goes on beside it
}

func mustExec(t *testing.T, db *sql.DB, query string, args ...any) {
	t.Helper()
	if _, err := db.Exec(query, args...); err != nil {
		t.Fatal(err)
	}
}

func fileSize(t *testing.T, name string) int64 {
	t.Helper()
	fi, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
