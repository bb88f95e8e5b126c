// Package testenv gives integration tests the real servers hookrelay runs on:
// one PostgreSQL cluster and one Temporal dev server per test binary, started
// on first use and stopped by Main, and a fresh database per test.
package testenv

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	historypb "go.temporal.io/api/history/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/hookrelay/hookrelay/devenv"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/workflows"
)

// testSettings make the throwaway test cluster fast: nothing in it needs to
// survive a crash of the machine.
var testSettings = []string{"fsync=off", "synchronous_commit=off", "full_page_writes=off"}

var (
	mu       sync.Mutex
	template string // migrated database Store copies; "" until made
	pg       *devenv.Postgres
	pgDir    string
	temporal *devenv.Temporal
	dbSeq    atomic.Int64
)

// Main runs the tests of a package and then stops the servers they started.
// Call it from TestMain: os.Exit(testenv.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	mu.Lock()
	defer mu.Unlock()
	if temporal != nil {
		_ = temporal.Stop()
	}
	if pg != nil {
		_ = pg.Stop()
		_ = os.RemoveAll(pgDir)
	}
	return code
}

// Logger is the logger tests hand to the code under test: quiet unless
// HOOKRELAY_TEST_LOG is set.
func Logger() *slog.Logger {
	if os.Getenv("HOOKRELAY_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// skipOrFail skips the test when a server cannot be started, unless
// HOOKRELAY_REQUIRE_SERVERS=1 (as in `make test` and CI), where it fails.
func skipOrFail(t testing.TB, what string, err error) {
	t.Helper()
	if os.Getenv("HOOKRELAY_REQUIRE_SERVERS") == "1" {
		t.Fatalf("testenv: %s: %v", what, err)
	}
	t.Skipf("testenv: %s unavailable (set HOOKRELAY_REQUIRE_SERVERS=1 to fail instead): %v", what, err)
}

// Tool finds a command `make bootstrap` installs (promtool, docker-compose),
// skipping the test without it unless HOOKRELAY_REQUIRE_SERVERS=1.
func Tool(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		skipOrFail(t, name+" (run `make bootstrap`)", err)
	}
	return path
}

// DatabaseURL starts the shared cluster if needed and returns the URL of a
// new, empty database for this test.
func DatabaseURL(t testing.TB) string {
	t.Helper()
	return newDatabase(t, false)
}

// databaseName is a new database name for the test.
func databaseName(t testing.TB) string {
	return fmt.Sprintf("t_%d_%d_%s", os.Getpid(), dbSeq.Add(1), sanitize(t.Name()))
}

func sanitize(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	s := b.String()
	if len(s) > 30 {
		s = s[:30]
	}
	return s
}

// Store opens a migrated store on a fresh database, closed when the test
// ends, sealing secrets with Keys(). The database is a copy of one migrated once per test binary.
func Store(t testing.TB) *store.Store {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, newDatabase(t, true))
	if err != nil {
		t.Fatal(err)
	}
	st.UseKeys(Keys())
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// startCluster starts the shared cluster if it is not running; mu is held.
func startCluster(ctx context.Context, t testing.TB) {
	t.Helper()
	if pg != nil {
		return
	}
	dir, err := os.MkdirTemp("", "hookrelay-pg-")
	if err != nil {
		t.Fatal(err)
	}
	p, err := devenv.StartPostgres(ctx, devenv.PostgresConfig{DataDir: dir, Settings: testSettings}, Logger())
	if err != nil {
		_ = os.RemoveAll(dir)
		skipOrFail(t, "postgres", err)
	}
	pg, pgDir = p, dir
}

// newDatabase starts the shared cluster if needed and returns the URL of a
// new database for the test: empty, or, when migrated, a copy of the
// migrated template (made on first use).
func newDatabase(t testing.TB, migrated bool) string {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	startCluster(ctx, t)
	from := ""
	if migrated {
		from = migratedTemplate(ctx, t)
	}
	url, err := pg.CreateDatabaseFrom(ctx, databaseName(t), from)
	if err != nil {
		t.Fatalf("testenv: create database: %v", err)
	}
	return url
}

// migratedTemplate is the name of the migrated template database, made on
// first use; mu is held.
func migratedTemplate(ctx context.Context, t testing.TB) string {
	t.Helper()
	if template == "" {
		name := fmt.Sprintf("template_%d", os.Getpid())
		if err := migrateTemplate(ctx, name); err != nil {
			t.Fatalf("testenv: migrated template: %v", err)
		}
		template = name
	}
	return template
}

// migrateTemplate creates database name and applies the migrations to it,
// leaving no connection open (a template must have none).
func migrateTemplate(ctx context.Context, name string) error {
	url, err := pg.CreateDatabase(ctx, name)
	if err != nil {
		return err
	}
	st, err := store.Open(ctx, url)
	if err != nil {
		return err
	}
	defer st.Close()
	return st.Migrate(ctx)
}

// TemporalServer starts the shared dev server (headless, in memory, with
// hookrelay's search attributes) if needed.
func TemporalServer(t testing.TB) *devenv.Temporal {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if temporal == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		port, err := devenv.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		tmp, err := devenv.StartTemporal(ctx, devenv.TemporalConfig{
			Port: port, Headless: true, SearchAttributes: workflows.SearchAttributes(),
		}, Logger())
		if err != nil {
			skipOrFail(t, "temporal", err)
		}
		temporal = tmp
	}
	return temporal
}

// Client dials the shared dev server; the client is closed when the test ends.
func Client(t testing.TB) client.Client {
	t.Helper()
	srv := TemporalServer(t)
	c, err := client.Dial(client.Options{
		HostPort: srv.Address, Namespace: srv.Namespace,
		Logger: sdklog.NewStructuredLogger(Logger()),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// History is a workflow's history, as the dev server has it now.
func History(t testing.TB, c client.Client, workflowID string) *historypb.History {
	t.Helper()
	hist := &historypb.History{}
	it := c.GetWorkflowHistory(context.Background(), workflowID, "", false, 0)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		hist.Events = append(hist.Events, e)
	}
	return hist
}

// AwaitListed waits, up to 30 s, until the runs visibility lists for query
// satisfy done, and fails the test if they never do.
func AwaitListed(t testing.TB, c client.Client, query string, done func([]*workflowpb.WorkflowExecutionInfo) bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp, err := c.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{Query: query})
		if err == nil && done(resp.GetExecutions()) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("visibility never listed what the test waits for, for %s: %d runs, %v", query, len(resp.GetExecutions()), err)
		}
	}
}
