package testenv

import (
	"context"
	"os"
	"testing"

	"github.com/hookrelay/hookrelay/devenv"
	"github.com/hookrelay/hookrelay/store"
)

// OwnPostgres starts a PostgreSQL cluster of the test's own (the shared one
// cannot be stopped), with the schema applied, stopped when the test ends.
// cfg starts it again where it was (devenv.StartPostgres) after a Stop.
func OwnPostgres(t *testing.T) (pg *devenv.Postgres, cfg devenv.PostgresConfig, st *store.Store) {
	t.Helper()
	dir, err := os.MkdirTemp("", "hookrelay-pgdown-")
	if err == nil {
		err = os.Chmod(dir, 0o755) // PostgreSQL runs as its own user under root
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	cfg = devenv.PostgresConfig{DataDir: dir + "/pg", Settings: []string{"fsync=off"}}
	ctx := context.Background()
	pg, err = devenv.StartPostgres(ctx, cfg, Logger())
	if err != nil {
		skipOrFail(t, "postgres", err)
	}
	t.Cleanup(func() { _ = pg.Stop() })
	st, err = store.Open(ctx, pg.URL)
	if err == nil {
		st.UseKeys(Keys())
		err = st.Migrate(ctx)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	cfg.Port = pg.Port
	return pg, cfg, st
}
