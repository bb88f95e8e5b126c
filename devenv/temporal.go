package devenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
)

// temporalStartTimeout bounds how long StartTemporal waits for the frontend.
const temporalStartTimeout = 60 * time.Second

// temporalStopTimeout is how long Stop waits after SIGTERM before SIGKILL.
const temporalStopTimeout = 15 * time.Second

// TemporalConfig says how to run the dev server.
type TemporalConfig struct {
	// BinPath is the temporal CLI. "" means bin/temporal in the repo root
	// (see RepoRoot), then temporal on the PATH.
	BinPath string
	// DBFile is the SQLite file that keeps the server's state across runs;
	// "" keeps it in memory.
	DBFile string
	// Port is the frontend gRPC port on 127.0.0.1; 0 means 7233.
	Port int
	// UIPort is the Web UI port; 0 means Port+1000 (8233 for the default
	// port), or a free port when that is above 65535. Ignored when Headless.
	UIPort int
	// Headless disables the Web UI.
	Headless bool
	// Namespace is created at launch, next to "default"; "" means "default".
	Namespace string
	// SearchAttributes maps custom search attribute names to their types
	// (Keyword, Text, Int, Double, Bool, Datetime, KeywordList), e.g.
	// "EndpointId": "Keyword". They are registered on Namespace.
	SearchAttributes map[string]string
	// MetricsPort, when set, serves the server's Prometheus metrics on
	// 127.0.0.1:MetricsPort/metrics (persistence calls by operation, task
	// latencies: what a profile of the dev server reads).
	MetricsPort int
	// LogLevel is the server's log level (debug, info, warn, error, never);
	// "" means warn.
	LogLevel string
	// Output receives the server's stdout and stderr. nil means the file
	// temporal.log next to DBFile, or a new temporary file when DBFile is "".
	Output io.Writer
}

// Temporal is a running dev server.
type Temporal struct {
	// Address is the frontend's host:port, for client.Options.HostPort.
	Address string
	// UIAddress is the Web UI's URL; "" when headless.
	UIAddress string
	// Namespace is the namespace created at launch.
	Namespace string
	// LogPath is the file holding the server's output; "" when
	// TemporalConfig.Output was given. A temporary log (in-memory DBFile) is
	// deleted by Stop, and kept when StartTemporal fails.
	LogPath string

	cmd      *exec.Cmd
	logFile  *os.File
	logStart int64         // size of the log file before this run
	tempLog  bool          // LogPath is a temporary file for Stop to delete
	done     chan struct{} // closed when the process has exited
	waitErr  error         // set before done is closed
	ckpt     *checkpointer // nil for an in-memory server
}

// StartTemporal runs `temporal server start-dev` on 127.0.0.1, waits until the
// frontend answers DescribeNamespace for the namespace, makes sure the search
// attributes are registered (an existing DBFile keeps its data and gets any
// newly configured attributes added), and returns.
func StartTemporal(ctx context.Context, cfg TemporalConfig, logger *slog.Logger) (*Temporal, error) {
	cfg, err := temporalDefaults(cfg)
	if err != nil {
		return nil, fmt.Errorf("start temporal: %w", err)
	}
	attrs, err := parseSearchAttributes(cfg.SearchAttributes)
	if err != nil {
		return nil, fmt.Errorf("start temporal: %w", err)
	}
	return retryEarlyExit(temporalStartTries, func() (*Temporal, error) {
		return startTemporalOnce(ctx, cfg, attrs, logger)
	}, func(err error) { logger.Warn("temporal_exited_at_start", "err", err) })
}

// startTemporalOnce is one launch of StartTemporal, on cfg with its
// defaults filled in.
func startTemporalOnce(ctx context.Context, cfg TemporalConfig, attrs map[string]enumspb.IndexedValueType, logger *slog.Logger) (*Temporal, error) {
	t := &Temporal{
		Address:   "127.0.0.1:" + strconv.Itoa(cfg.Port),
		Namespace: cfg.Namespace,
		done:      make(chan struct{}),
	}
	if !cfg.Headless {
		t.UIAddress = "http://127.0.0.1:" + strconv.Itoa(cfg.UIPort)
	}
	begin := time.Now()
	if err := t.launch(cfg); err != nil {
		return nil, fmt.Errorf("start temporal: %w", err)
	}
	if err := t.waitReady(ctx, attrs); err != nil {
		err = fmt.Errorf("start temporal: %w", err)
		if stopErr := t.stop(); stopErr != nil {
			err = errors.Join(err, stopErr)
		}
		return nil, err
	}
	if cfg.DBFile != "" {
		ckpt, err := startCheckpoints(cfg.DBFile, checkpointEvery, logger)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("start temporal: %w", err), t.stop())
		}
		t.ckpt = ckpt
	}
	logger.Info("temporal_started", "address", t.Address, "ui_address", t.UIAddress,
		"namespace", t.Namespace, "db_file", cfg.DBFile, "log_path", t.LogPath, "took", time.Since(begin))
	return t, nil
}

// temporalDefaults fills in the zero fields of cfg.
func temporalDefaults(cfg TemporalConfig) (TemporalConfig, error) {
	var err error
	if cfg.BinPath == "" {
		if cfg.BinPath, err = findTemporal(); err != nil {
			return cfg, err
		}
	}
	if cfg.DBFile != "" {
		if cfg.DBFile, err = filepath.Abs(cfg.DBFile); err != nil {
			return cfg, err
		}
	}
	if cfg.Port == 0 {
		cfg.Port = 7233
	}
	if cfg.UIPort == 0 && !cfg.Headless {
		cfg.UIPort = cfg.Port + 1000
		if cfg.UIPort > 65535 {
			if cfg.UIPort, err = FreePort(); err != nil {
				return cfg, err
			}
		}
	}
	if cfg.Namespace == "" {
		cfg.Namespace = "default"
	}
	if cfg.LogLevel == "" {
		cfg.LogLevel = "warn"
	}
	return cfg, nil
}

// findTemporal returns bin/temporal in the repo root, else temporal on the PATH.
func findTemporal() (string, error) {
	if root, err := RepoRoot(); err == nil {
		p := filepath.Join(root, "bin", "temporal")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath("temporal"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("find temporal CLI in bin/ or PATH: %w", ErrNotInstalled)
}

// searchAttributeCache turns back on the server's search-attribute cache,
// which `temporal server start-dev` turns off so that an attribute added
// while it runs can be used at once. Off, every workflow start, upsert and
// visibility record reads the attributes from the server's one SQLite
// connection again: about 10 reads of cluster metadata and 3 of the
// namespace per delivery, measured with the server's persistence metrics.
// hookrelay's attributes are registered when the server starts
// (--search-attribute), so the cache holds them from the first read; one
// added later (`hookrelay setup` against a running dev server) is usable
// within the cache's refresh interval, a minute (BENCHMARKS.md).
const searchAttributeCache = "system.forceSearchAttributesCacheRefreshOnRead=false"

// visibilityWorkers bounds the visibility writes the dev server makes at
// once. Its default, 512, lets a burst of them queue on its one SQLite
// connection ahead of the workflow starts and completions; each costs
// about 2 ms there (45 indexes and two full-text tables per record).
// With two, workflows progress first and visibility follows a little
// later under load, which also spares a workflow that ends within
// milliseconds a start record of its own: measured in BENCHMARKS.md
// (about 5-10% more deliveries a second, the floor's and hookrelay's).
const visibilityWorkers = "history.visibilityProcessorSchedulerWorkerCount=2"

// fairness has matching serve each task queue's tasks by their fairness key
// in turn, not first come first served: a Delivery's tasks carry its
// endpoint (workflows.DeliveryStartOptions), so a burst or a retry storm of
// one endpoint waits behind itself (docs/endpoints.md#isolation).
const fairness = "matching.enableFairness=true"

// temporalArgs builds the command line of the dev server.
func temporalArgs(cfg TemporalConfig) []string {
	args := []string{"server", "start-dev",
		"--ip", "127.0.0.1",
		"--port", strconv.Itoa(cfg.Port),
		"--log-level", cfg.LogLevel,
		"--dynamic-config-value", "matching.numTaskqueueReadPartitions=1",
		"--dynamic-config-value", "matching.numTaskqueueWritePartitions=1",
		"--dynamic-config-value", searchAttributeCache,
		"--dynamic-config-value", visibilityWorkers,
		"--dynamic-config-value", fairness,
	}
	if cfg.MetricsPort != 0 {
		args = append(args, "--metrics-port", strconv.Itoa(cfg.MetricsPort))
	}
	if cfg.Headless {
		args = append(args, "--headless")
	} else {
		args = append(args, "--ui-port", strconv.Itoa(cfg.UIPort))
	}
	args = append(args, sqliteArgs(cfg.DBFile)...)
	if cfg.Namespace != "default" {
		args = append(args, "--namespace", cfg.Namespace)
	}
	names := make([]string, 0, len(cfg.SearchAttributes))
	for name := range cfg.SearchAttributes {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		args = append(args, "--search-attribute", name+"="+cfg.SearchAttributes[name])
	}
	return args
}

// launch starts the server process in its own process group.
func (t *Temporal) launch(cfg TemporalConfig) error {
	if _, err := os.Stat(cfg.BinPath); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("temporal CLI %s: %w", cfg.BinPath, ErrNotInstalled)
	} else if err != nil {
		return fmt.Errorf("temporal CLI: %w", err)
	}
	out, err := t.openOutput(cfg)
	if err != nil {
		return err
	}
	t.cmd = exec.Command(cfg.BinPath, temporalArgs(cfg)...)
	t.cmd.Stdout = out
	t.cmd.Stderr = out
	t.cmd.SysProcAttr = childProcAttr()
	if err := t.cmd.Start(); err != nil {
		t.closeLog()
		_ = t.removeTempLog()
		return fmt.Errorf("run %s: %w", cfg.BinPath, err)
	}
	go func() {
		t.waitErr = t.cmd.Wait()
		t.closeLog()
		close(t.done)
	}()
	return nil
}

// openOutput returns where the server's output goes, opening the log file
// when no writer was given.
func (t *Temporal) openOutput(cfg TemporalConfig) (io.Writer, error) {
	if cfg.Output != nil {
		return cfg.Output, nil
	}
	var f *os.File
	var err error
	if cfg.DBFile != "" {
		f, err = os.OpenFile(filepath.Join(filepath.Dir(cfg.DBFile), "temporal.log"),
			os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	} else {
		f, err = os.CreateTemp("", "hookrelay-temporal-*.log")
		t.tempLog = err == nil
	}
	if err != nil {
		return nil, fmt.Errorf("open temporal log: %w", err)
	}
	t.logFile, t.LogPath, t.logStart = f, f.Name(), logSize(f.Name())
	return f, nil
}

// closeLog closes the log file StartTemporal opened, if any.
func (t *Temporal) closeLog() {
	if t.logFile != nil {
		_ = t.logFile.Close()
	}
}

// logHint points at the server's output of this run, for error messages.
func (t *Temporal) logHint() string {
	if t.LogPath == "" {
		return ""
	}
	return fmt.Sprintf(" (log: %s)\n%s", t.LogPath, logTail(t.LogPath, t.logStart, 10))
}

// Stop sends SIGTERM to the server's process group, waits for it to exit
// (SIGKILL after 15s) and deletes the log if it was a temporary file.
// Stopping twice is a no-op.
func (t *Temporal) Stop() error {
	if err := t.stop(); err != nil {
		return err
	}
	if err := t.removeTempLog(); err != nil {
		return fmt.Errorf("stop temporal: %w", err)
	}
	return nil
}

// removeTempLog deletes the log if StartTemporal made it a temporary file.
func (t *Temporal) removeTempLog() error {
	if !t.tempLog {
		return nil
	}
	t.tempLog = false
	if err := os.Remove(t.LogPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove temporary log: %w", err)
	}
	return nil
}

// stop ends the server process, keeping its log.
func (t *Temporal) stop() error {
	t.stopCheckpoints()
	if t.cmd == nil || t.cmd.Process == nil {
		return nil
	}
	select {
	case <-t.done:
		return nil
	default:
	}
	pgid := t.cmd.Process.Pid
	if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stop temporal: %w", err)
	}
	select {
	case <-t.done:
	case <-time.After(temporalStopTimeout):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-t.done
	}
	return nil
}

// stopCheckpoints ends the checkpointer, if one runs.
func (t *Temporal) stopCheckpoints() {
	t.ckpt.stop()
	t.ckpt = nil
}

// Kill ends the server with SIGKILL, as a crash would (the chaos suite);
// StartTemporal on the same DBFile and port starts it again.
func (t *Temporal) Kill() error {
	t.stopCheckpoints()
	if t.cmd == nil || t.cmd.Process == nil {
		return nil
	}
	if err := syscall.Kill(-t.cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill temporal: %w", err)
	}
	<-t.done
	return nil
}
