package testenv

import (
	"os/exec"
	"testing"

	"github.com/hookrelay/hookrelay/devenv"
	"github.com/hookrelay/hookrelay/store"
)

// Dump is pg_dump's output for the database of st, a store Store opened:
// what a stolen backup of it would hold.
func Dump(t testing.TB, st *store.Store) string {
	t.Helper()
	var db string
	if err := st.DB().Get(&db, `SELECT current_database()`); err != nil {
		t.Fatal(err)
	}
	tool, err := devenv.PGTool("pg_dump")
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	url := pg.DatabaseURL(db)
	mu.Unlock()
	out, err := exec.Command(tool, "--no-owner", "--dbname", url).Output()
	if err != nil {
		t.Fatalf("pg_dump: %v", err)
	}
	return string(out)
}
