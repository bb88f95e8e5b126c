package devenv

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// Azurite's well-known development account (Microsoft's documented
// devstoreaccount1 and its key): the one account the emulator serves.
const (
	AzuriteAccount = "devstoreaccount1"
	AzuriteKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// AzuriteConfig says how to run Azurite's blob service.
type AzuriteConfig struct {
	// Port is the blob service's port on 127.0.0.1 (required).
	Port int
	// DataDir holds the blobs (required); a restart on it keeps them.
	DataDir string
	// BinPath is azurite-blob; "" means bin/azurite-blob in the repo root,
	// else azurite-blob on the PATH.
	BinPath string
}

// Azurite is a running Azurite blob service (npm azurite, installed by
// scripts/bootstrap.sh).
type Azurite struct {
	// BlobEndpoint is the account's blob endpoint,
	// http://127.0.0.1:<port>/devstoreaccount1.
	BlobEndpoint string
	// Config is what it runs with (BinPath filled in): StartAzurite on it
	// again restarts it with its blobs.
	Config AzuriteConfig
	cmd    *exec.Cmd
	done   chan struct{}
}

// ConnectionString is the devstoreaccount1 connection string of this
// Azurite, as AZURE_STORAGE_CONNECTION_STRING takes it.
func (a *Azurite) ConnectionString() string {
	return "DefaultEndpointsProtocol=http;AccountName=" + AzuriteAccount + ";AccountKey=" + AzuriteKey +
		";BlobEndpoint=" + a.BlobEndpoint + ";"
}

// StartAzurite runs `azurite-blob --blobHost 127.0.0.1 --blobPort <port>
// --location <dir> --skipApiVersionCheck` and waits until it listens.
func StartAzurite(ctx context.Context, cfg AzuriteConfig, logger *slog.Logger) (*Azurite, error) {
	if cfg.BinPath == "" {
		p, err := findAzurite()
		if err != nil {
			return nil, err
		}
		cfg.BinPath = p
	}
	a := &Azurite{Config: cfg, done: make(chan struct{}),
		BlobEndpoint: "http://127.0.0.1:" + strconv.Itoa(cfg.Port) + "/" + AzuriteAccount}
	if err := a.launch(); err != nil {
		return nil, fmt.Errorf("start azurite: %w", err)
	}
	if err := a.waitListening(ctx); err != nil {
		return nil, errors.Join(fmt.Errorf("start azurite: %w", err), a.Stop())
	}
	logger.Info("azurite_started", "blob_endpoint", a.BlobEndpoint, "data_dir", cfg.DataDir)
	return a, nil
}

// launch starts the process, its output in DataDir/azurite.log.
func (a *Azurite) launch() error {
	if err := os.MkdirAll(a.Config.DataDir, 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(filepath.Join(a.Config.DataDir, "azurite.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	a.cmd = exec.Command(a.Config.BinPath, "--blobHost", "127.0.0.1", "--blobPort", strconv.Itoa(a.Config.Port),
		"--location", a.Config.DataDir, "--skipApiVersionCheck")
	a.cmd.Stdout, a.cmd.Stderr, a.cmd.SysProcAttr = out, out, childProcAttr()
	if err := a.cmd.Start(); err != nil {
		out.Close()
		return err
	}
	go func() { _ = a.cmd.Wait(); out.Close(); close(a.done) }()
	return nil
}

// waitListening waits until the blob port accepts connections, for up to 2
// minutes (node starts slowly on a busy machine).
func (a *Azurite) waitListening(ctx context.Context) error {
	addr := "127.0.0.1:" + strconv.Itoa(a.Config.Port)
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); {
		select {
		case <-a.done:
			return fmt.Errorf("azurite %w (see %s)", ErrExited, filepath.Join(a.Config.DataDir, "azurite.log"))
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			return c.Close()
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("azurite not listening on %s after 2 minutes", addr)
}

// Stop ends Azurite (SIGTERM to its process group, SIGKILL after 10 s) and
// waits for it; its blobs stay in DataDir.
func (a *Azurite) Stop() error {
	pgid := a.cmd.Process.Pid
	if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stop azurite: %w", err)
	}
	select {
	case <-a.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-a.done
	}
	return nil
}

// findAzurite returns bin/azurite-blob in the repo root, else azurite-blob
// on the PATH.
func findAzurite() (string, error) {
	if root, err := RepoRoot(); err == nil {
		p := filepath.Join(root, "bin", "azurite-blob")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	if p, err := exec.LookPath("azurite-blob"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("find azurite-blob in bin/ or PATH: %w", ErrNotInstalled)
}
