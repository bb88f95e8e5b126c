package devenv

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/lib/pq"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
)

// skipIfNotInstalled skips the test when a server binary is missing, unless
// HOOKRELAY_REQUIRE_SERVERS=1 (as in CI), and fails it on any other error.
func skipIfNotInstalled(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if errors.Is(err, ErrNotInstalled) && os.Getenv("HOOKRELAY_REQUIRE_SERVERS") != "1" {
		t.Skipf("skipping: %v", err)
	}
	t.Fatal(err)
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), nil))
}

// pgDataDir returns a data dir the postgres user can reach when we are root:
// t.TempDir's parent is mode 0700, so open it up for traversal.
func pgDataDir(t *testing.T) string {
	dir := t.TempDir()
	if err := os.Chmod(filepath.Dir(dir), 0o711); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "pg")
}

func startPostgres(t *testing.T, dataDir string) *Postgres {
	t.Helper()
	begin := time.Now()
	pg, err := StartPostgres(t.Context(), PostgresConfig{DataDir: dataDir}, testLogger(t))
	skipIfNotInstalled(t, err)
	t.Logf("postgres ready in %v", time.Since(begin))
	t.Cleanup(func() {
		if err := pg.Stop(); err != nil {
			t.Error(err)
		}
	})
	return pg
}

func openDB(t *testing.T, url string) *sql.DB {
	t.Helper()
	db, err := sql.Open("postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestPostgres(t *testing.T) {
	pg := startPostgres(t, pgDataDir(t))
	want := "postgres://hookrelay@127.0.0.1:"
	if !strings.HasPrefix(pg.URL, want) || !strings.HasSuffix(pg.URL, "/hookrelay?sslmode=disable") {
		t.Errorf("URL = %q", pg.URL)
	}
	db := openDB(t, pg.URL)
	var user, dbName string
	row := db.QueryRowContext(t.Context(), "SELECT current_user, current_database()")
	if err := row.Scan(&user, &dbName); err != nil {
		t.Fatal(err)
	}
	if user != "hookrelay" || dbName != "hookrelay" {
		t.Errorf("connected as %s to %s, want hookrelay to hookrelay", user, dbName)
	}
	var segment, maxWAL, compression string
	row = db.QueryRowContext(t.Context(), `SELECT current_setting('wal_segment_size'), current_setting('max_wal_size'),
		current_setting('wal_compression')`)
	if err := row.Scan(&segment, &maxWAL, &compression); err != nil {
		t.Fatal(err)
	}
	if segment != "1MB" || maxWAL != "1GB" || compression != "lz4" {
		t.Errorf("wal_segment_size %s, max_wal_size %s, wal_compression %s; want 1MB, 1GB, lz4 (walSegmentMB, walSettings)",
			segment, maxWAL, compression)
	}

	url, err := pg.CreateDatabase(t.Context(), "isolated")
	if err != nil {
		t.Fatal(err)
	}
	if err := openDB(t, url).PingContext(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := pg.CreateDatabase(t.Context(), "isolated"); err == nil {
		t.Error("CreateDatabase of an existing name succeeded")
	}
}

func TestPostgresReuseAndRestart(t *testing.T) {
	dataDir := pgDataDir(t)
	pg := startPostgres(t, dataDir)
	url, err := pg.CreateDatabase(t.Context(), "isolated")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := openDB(t, url).ExecContext(t.Context(), "CREATE TABLE kept (id int)"); err != nil {
		t.Fatal(err)
	}

	// A second start on the same dir reuses the running server.
	again := startPostgres(t, dataDir)
	if again.URL != pg.URL || again.started {
		t.Errorf("second start: URL %q started %v, want reuse of %q", again.URL, again.started, pg.URL)
	}

	// After a stop, a start on the same dir keeps the data.
	if err := pg.Stop(); err != nil {
		t.Fatal(err)
	}
	restarted := startPostgres(t, dataDir)
	url = restarted.DatabaseURL("isolated")
	if _, err := openDB(t, url).ExecContext(t.Context(), "SELECT * FROM kept"); err != nil {
		t.Errorf("table lost across restart: %v", err)
	}
}

func TestPostgresUnreachableDataDir(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("only root runs the server as another user")
	}
	locked := filepath.Join(t.TempDir(), "locked")
	if err := os.Mkdir(locked, 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := StartPostgres(t.Context(), PostgresConfig{DataDir: filepath.Join(locked, "pg")}, testLogger(t))
	if errors.Is(err, ErrNotInstalled) {
		skipIfNotInstalled(t, err)
	}
	if err == nil || !strings.Contains(err.Error(), "unreachable for the postgres user") {
		t.Fatalf("err = %v, want an unreachable data dir error", err)
	}
}

func startTemporal(t *testing.T, cfg TemporalConfig) *Temporal {
	t.Helper()
	begin := time.Now()
	tmp, err := StartTemporal(t.Context(), cfg, testLogger(t))
	skipIfNotInstalled(t, err)
	t.Logf("temporal ready in %v", time.Since(begin))
	t.Cleanup(func() {
		if err := tmp.Stop(); err != nil {
			t.Error(err)
		}
	})
	return tmp
}

func dialTemporal(t *testing.T, tmp *Temporal) client.Client {
	t.Helper()
	c, err := client.DialContext(t.Context(), client.Options{
		HostPort:  tmp.Address,
		Namespace: tmp.Namespace,
		Logger:    sdklog.NewStructuredLogger(testLogger(t)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func headlessConfig(t *testing.T) TemporalConfig {
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return TemporalConfig{
		Port:             port,
		Headless:         true,
		Namespace:        "hookrelay-test",
		SearchAttributes: map[string]string{"EndpointId": "Keyword", "Attempts": "Int"},
	}
}

func TestTemporal(t *testing.T) {
	tmp := startTemporal(t, headlessConfig(t))
	if tmp.UIAddress != "" {
		t.Errorf("UIAddress = %q, want none when headless", tmp.UIAddress)
	}
	c := dialTemporal(t, tmp)
	ns, err := c.WorkflowService().DescribeNamespace(t.Context(),
		&workflowservice.DescribeNamespaceRequest{Namespace: "hookrelay-test"})
	if err != nil {
		t.Fatal(err)
	}
	if ns.GetNamespaceInfo().GetName() != "hookrelay-test" {
		t.Errorf("namespace = %q", ns.GetNamespaceInfo().GetName())
	}
	assertSearchAttributes(t, c, "hookrelay-test", "EndpointId", "Attempts")

	if err := tmp.Stop(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	if _, err := c.CheckHealth(ctx, &client.CheckHealthRequest{}); err == nil {
		t.Error("server still answers after Stop")
	}
}

func assertSearchAttributes(t *testing.T, c client.Client, namespace string, names ...string) {
	t.Helper()
	resp, err := c.OperatorService().ListSearchAttributes(t.Context(),
		&operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if _, ok := resp.GetCustomAttributes()[name]; !ok {
			t.Errorf("search attribute %s not registered", name)
		}
	}
}

// assertWAL checks that the SQLite file at path is in write-ahead-log mode:
// bytes 18 and 19 of its header (the file format's write and read versions)
// are 2 for WAL, 1 for a rollback journal.
func assertWAL(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	header := make([]byte, 20)
	if _, err := io.ReadFull(f, header); err != nil {
		t.Fatal(err)
	}
	if header[18] != 2 || header[19] != 2 {
		t.Errorf("%s: SQLite write/read versions %d/%d, want 2/2 (WAL)", path, header[18], header[19])
	}
}

func TestTemporalDBFileKeepsData(t *testing.T) {
	cfg := headlessConfig(t)
	cfg.DBFile = filepath.Join(t.TempDir(), "temporal.db")
	cfg.SearchAttributes = map[string]string{"EndpointId": "Keyword"}
	first := startTemporal(t, cfg)
	opts := client.StartWorkflowOptions{ID: "devenv-persist", TaskQueue: "devenv-none"}
	if _, err := dialTemporal(t, first).ExecuteWorkflow(t.Context(), opts, "Nothing"); err != nil {
		t.Fatal(err)
	}
	if err := first.Stop(); err != nil {
		t.Fatal(err)
	}
	assertWAL(t, cfg.DBFile)

	// Restart on the same file with one more search attribute.
	cfg.SearchAttributes = map[string]string{"EndpointId": "Keyword", "Attempts": "Int"}
	second := startTemporal(t, cfg)
	c := dialTemporal(t, second)
	if _, err := c.DescribeWorkflowExecution(t.Context(), "devenv-persist", ""); err != nil {
		t.Errorf("workflow lost across restart: %v", err)
	}
	assertSearchAttributes(t, c, cfg.Namespace, "EndpointId", "Attempts")
	if err := second.Stop(); err != nil {
		t.Fatal(err)
	}

	// A type clash with the file is reported rather than ignored.
	cfg.SearchAttributes = map[string]string{"EndpointId": "Int"}
	if tmp, err := StartTemporal(t.Context(), cfg, testLogger(t)); err == nil {
		tmp.Stop()
		t.Error("StartTemporal accepted a search attribute type clash")
	}
}

func TestTemporalArgs(t *testing.T) {
	cfg, err := temporalDefaults(TemporalConfig{
		BinPath:          "/bin/true",
		DBFile:           "/data/t.db",
		Namespace:        "hookrelay",
		SearchAttributes: map[string]string{"EndpointId": "Keyword", "Attempts": "Int"},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(temporalArgs(cfg), " ")
	want := "server start-dev --ip 127.0.0.1 --port 7233 --log-level warn" +
		" --dynamic-config-value matching.numTaskqueueReadPartitions=1" +
		" --dynamic-config-value matching.numTaskqueueWritePartitions=1" +
		" --dynamic-config-value system.forceSearchAttributesCacheRefreshOnRead=false" +
		" --dynamic-config-value history.visibilityProcessorSchedulerWorkerCount=2" +
		" --dynamic-config-value matching.enableFairness=true" +
		" --ui-port 8233 --db-filename /data/t.db" +
		" --sqlite-pragma journal_mode=wal --sqlite-pragma synchronous=normal --sqlite-pragma wal_autocheckpoint=10000 --namespace hookrelay" +
		" --search-attribute Attempts=Int --search-attribute EndpointId=Keyword"
	if got != want {
		t.Errorf("args:\n got %s\nwant %s", got, want)
	}
}
