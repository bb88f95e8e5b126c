package cluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/hookrelay/hookrelay/devenv"
)

// Defaults is the stack `make run-cluster` runs: 16 history shards on two
// history hosts (enough that each holds some), two APIs, two workers, the binaries in bin/, the schema of the go.temporal.io/server
// version cluster/temporalserver pins. Unless HOOKRELAY_ADMIN_KEY is set, the
// API runs open (for the README walk-through, on loopback), and deliveries
// may reach loopback unless HOOKRELAY_EGRESS_ALLOW says otherwise.
func Defaults(dir string) (Config, error) {
	root, err := devenv.RepoRoot()
	if err != nil {
		return Config{}, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Config{}, err
	}
	schema, err := schemaDir(root)
	if err != nil {
		return Config{}, err
	}
	cfg := Config{Dir: abs, Bin: filepath.Join(root, "bin"), SchemaDir: schema, Shards: 16, APIs: 2, Workers: 2}
	if os.Getenv("HOOKRELAY_ADMIN_KEY") == "" {
		cfg.Env = append(cfg.Env, "HOOKRELAY_INSECURE_NO_AUTH=true")
	}
	if os.Getenv("HOOKRELAY_EGRESS_ALLOW") == "" {
		cfg.Env = append(cfg.Env, "HOOKRELAY_EGRESS_ALLOW=127.0.0.0/8,::1/128")
	}
	return cfg, nil
}

// OpenNote says what the stack leaves open, for its banner.
func OpenNote(cfg Config) string {
	for _, e := range cfg.Env {
		if e == "HOOKRELAY_INSECURE_NO_AUTH=true" {
			return "  OPEN MODE: the API needs no credentials (loopback only, for trying it); set HOOKRELAY_ADMIN_KEY to require them."
		}
	}
	return "  Credentials:     required (HOOKRELAY_ADMIN_KEY and API keys)"
}

// schemaDir is the PostgreSQL schema folder of the server module the
// cluster/temporalserver module requires, from the module cache.
func schemaDir(root string) (string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "go.temporal.io/server")
	cmd.Dir = filepath.Join(root, "cluster", "temporalserver")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("cluster: find go.temporal.io/server's schema: %w", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "schema", "postgresql", "v12"), nil
}
