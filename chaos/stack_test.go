package chaos

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/devenv"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/workflows"
)

// stack is PostgreSQL, the Temporal dev server (on its SQLite file, as
// `make run` keeps it), one `hookrelay api` and one `hookrelay worker`, each
// its own process.
type stack struct {
	t        *testing.T
	dir, bin string
	pgCfg    devenv.PostgresConfig
	pg       *devenv.Postgres
	tmpCfg   devenv.TemporalConfig
	temporal *devenv.Temporal
	api      string // http://127.0.0.1:port
	apiProc  *exec.Cmd
	worker   *exec.Cmd
	st       *store.Store
	keys     string // HOOKRELAY_ENCRYPTION_KEYS of the processes started next
}

func startStack(t *testing.T) *stack {
	t.Helper()
	root, err := devenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "hookrelay-chaos-")
	if err == nil {
		err = os.Chmod(dir, 0o755) // PostgreSQL runs as its own user under root
	}
	if err != nil {
		t.Fatal(err)
	}
	s := &stack{t: t, dir: dir, bin: filepath.Join(dir, "hookrelay"), keys: testenv.EncryptionKeys()}
	t.Cleanup(func() { s.stopAll(); _ = os.RemoveAll(dir) })
	build := exec.Command("go", "build", "-o", s.bin, "./cmd/hookrelay")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build hookrelay: %v\n%s", err, out)
	}
	s.startPostgres()
	s.startTemporal()
	if s.st, err = store.Open(context.Background(), s.pg.URL); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.st.Close() })
	s.api = "http://127.0.0.1:" + strconv.Itoa(freePort(t))
	s.startAPI()
	s.startWorker()
	return s
}

func freePort(t *testing.T) int {
	p, err := devenv.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (s *stack) startPostgres() {
	if s.pgCfg.DataDir == "" {
		s.pgCfg = devenv.PostgresConfig{DataDir: filepath.Join(s.dir, "pg")}
	}
	pg, err := devenv.StartPostgres(context.Background(), s.pgCfg, testenv.Logger())
	if err != nil {
		s.t.Fatal(err)
	}
	s.pg, s.pgCfg.Port = pg, pg.Port
}

func (s *stack) startTemporal() {
	if s.tmpCfg.DBFile == "" {
		s.tmpCfg = devenv.TemporalConfig{DBFile: filepath.Join(s.dir, "temporal.db"), Port: freePort(s.t),
			Headless: true, SearchAttributes: workflows.SearchAttributes()}
	}
	t, err := devenv.StartTemporal(context.Background(), s.tmpCfg, testenv.Logger())
	if err != nil {
		s.t.Fatal(err)
	}
	s.temporal = t
}

// env is the environment of `hookrelay api` and `hookrelay worker`.
func (s *stack) env() []string {
	return append(os.Environ(),
		"DATABASE_URL="+s.pg.URL, "TEMPORAL_ADDRESS="+s.temporal.Address,
		"HOOKRELAY_HTTP_ADDR="+s.api[len("http://"):], "HOOKRELAY_INSECURE_NO_AUTH=true",
		"HOOKRELAY_EGRESS_ALLOW=127.0.0.0/8", "HOOKRELAY_LOG_LEVEL=warn",
		"HOOKRELAY_ENCRYPTION_KEYS="+s.keys)
}

// run starts one hookrelay process, its output in dir/name.log.
func (s *stack) run(name string) *exec.Cmd {
	log, err := os.OpenFile(filepath.Join(s.dir, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		s.t.Fatal(err)
	}
	cmd := exec.Command(s.bin, name)
	cmd.Env, cmd.Stdout, cmd.Stderr = s.env(), log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); _ = log.Close() }()
	return cmd
}

func (s *stack) startAPI() {
	s.apiProc = s.run("api")
	if err := devenv.WaitReady(s.api+"/readyz", time.Minute, nil); err != nil {
		s.t.Fatalf("hookrelay api: %v; see %s", err, filepath.Join(s.dir, "api.log"))
	}
}

func (s *stack) startWorker() { s.worker = s.run("worker") }

// kill sends SIGKILL to a hookrelay process and waits for it to go.
func kill(cmd *exec.Cmd) {
	_ = cmd.Process.Kill()
	for syscall.Kill(cmd.Process.Pid, 0) == nil { // until Wait (in run) reaps it
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *stack) stopAll() {
	for _, c := range []*exec.Cmd{s.apiProc, s.worker} {
		if c != nil {
			kill(c)
		}
	}
	if s.temporal != nil {
		_ = s.temporal.Stop()
	}
	if s.pg != nil {
		_ = s.pg.Stop()
	}
}

// faults are what a scenario does to the stack midway; each kills or stops
// something and starts it again.
var faults = map[string]func(s *stack){
	"none":             func(*stack) {},
	"kill-worker":      func(s *stack) { kill(s.worker); time.Sleep(2 * time.Second); s.startWorker() },
	"kill-api":         func(s *stack) { kill(s.apiProc); time.Sleep(2 * time.Second); s.startAPI() },
	"kill-temporal":    func(s *stack) { s.must(s.temporal.Kill()); time.Sleep(2 * time.Second); s.startTemporal() },
	"restart-postgres": func(s *stack) { s.must(s.pg.StopImmediate()); time.Sleep(2 * time.Second); s.startPostgres() },
	"all-together": func(s *stack) {
		kill(s.worker)
		kill(s.apiProc)
		s.must(s.temporal.Kill())
		s.must(s.pg.StopImmediate())
		time.Sleep(2 * time.Second)
		s.startPostgres()
		s.startTemporal()
		s.startAPI()
		s.startWorker()
	},
}

func (s *stack) must(err error) {
	if err != nil {
		s.t.Fatal(fmt.Errorf("chaos: %w", err))
	}
}
