package cluster

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/hookrelay/hookrelay/devenv"
	"github.com/hookrelay/hookrelay/secrets"
)

// Defaults is the stack `make run-cluster` runs: 16 history shards on two
// history hosts (enough that each holds some), two APIs, two workers, the binaries in bin/, the schema of the go.temporal.io/server
// version cluster/temporalserver pins. Unless HOOKRELAY_ADMIN_KEY is set, the
// API runs open (for the README walk-through, on loopback), and deliveries
// may reach loopback unless HOOKRELAY_EGRESS_ALLOW says otherwise. Unless a
// key ring is given (HOOKRELAY_ENCRYPTION_KEYS or _FILE), the stored secrets
// are sealed with a key kept in dir (encryptionKeyFile).
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
	if os.Getenv("HOOKRELAY_ENCRYPTION_KEYS") == "" && os.Getenv("HOOKRELAY_ENCRYPTION_KEYS_FILE") == "" {
		file, err := encryptionKeyFile(abs)
		if err != nil {
			return Config{}, err
		}
		cfg.Env = append(cfg.Env, "HOOKRELAY_ENCRYPTION_KEYS_FILE="+file)
	}
	return cfg, nil
}

// encryptionKeyFile is the file in dir holding the stack's encryption key,
// made on first use.
func encryptionKeyFile(dir string) (string, error) {
	file := filepath.Join(dir, "encryption.key")
	if _, err := os.Stat(file); err == nil {
		return file, nil
	}
	k, err := secrets.NewKey()
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err == nil {
		err = os.WriteFile(file, []byte(k+"\n"), 0o600)
	}
	if err != nil {
		return "", fmt.Errorf("cluster: encryption key: %w", err)
	}
	return file, nil
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
	// go mod download fetches the module when this machine has not yet
	// (nothing built the cluster's binaries here), and names its folder.
	cmd := exec.Command("go", "mod", "download", "-json", "go.temporal.io/server")
	cmd.Dir = filepath.Join(root, "cluster", "temporalserver")
	out, err := cmd.Output()
	var mod struct{ Dir string }
	if err == nil {
		err = json.Unmarshal(out, &mod)
	}
	if err != nil {
		return "", fmt.Errorf("cluster: find go.temporal.io/server's schema: %w", err)
	}
	if mod.Dir == "" {
		return "", fmt.Errorf("cluster: find go.temporal.io/server's schema: go mod download said %s", out)
	}
	return filepath.Join(mod.Dir, "schema", "postgresql", "v12"), nil
}
