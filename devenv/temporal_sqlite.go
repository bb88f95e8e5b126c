package devenv

// sqlitePragmas are the SQLite settings of a file-backed dev server (the one
// `hookrelay dev` runs), passed as `--sqlite-pragma` flags. SQLite's default
// (a rollback journal, synchronous=FULL) syncs the file to disk several times
// per transaction, and the dev server makes a few transactions per workflow
// task: on the 2-core VM it started about 16 bare workflows a second. With a
// write-ahead log and synchronous=NORMAL a commit is an append to the log,
// synced only at checkpoints (BENCHMARKS.md has the figures).
//
// wal_autocheckpoint=10000 checkpoints the log every 10,000 pages (40 MB)
// rather than SQLite's 1,000. Each checkpoint copies pages back into the
// database file and syncs it, and the dev server rewrites the same index
// pages for every workflow, so fewer checkpoints write and sync less; what
// that measured, and what it did not change, is in docs/operations.md. The
// checkpointer (checkpoint.go) copies most of the log before the server's
// own checkpoint comes due, outside the server's one connection.
//
// The durability trade-off (docs/operations.md#the-dev-servers-sqlite-runs-in-wal-mode): the database
// stays consistent whatever happens, and nothing is lost when a process
// crashes or is killed; a power failure or kernel crash can lose the
// transactions logged since the last checkpoint (about 100 ms of workflow
// progress with the checkpointer running, at most 40 MB of log without it).
// Deliveries stored in PostgreSQL are never lost: the sweeper starts again
// any whose workflow is gone, and a delivery whose progress is rolled back
// makes its attempt again (receivers deduplicate on Webhook-Id).
var sqlitePragmas = []string{"journal_mode=wal", "synchronous=normal", "wal_autocheckpoint=10000"}

// sqliteArgs are the dev server's flags for its SQLite file, none for an
// in-memory server.
func sqliteArgs(dbFile string) []string {
	if dbFile == "" {
		return nil
	}
	args := []string{"--db-filename", dbFile}
	for _, p := range sqlitePragmas {
		args = append(args, "--sqlite-pragma", p)
	}
	return args
}
