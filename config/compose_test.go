package config_test

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hookrelay/hookrelay/config"
	"github.com/hookrelay/hookrelay/testenv"
)

const composeFile = "../docker-compose.yml"

// TestComposeFileValidates: docker-compose.yml passes Debian's
// `docker-compose config` (installed by `make bootstrap`), and refuses to
// render without an admin key or an encryption key.
func TestComposeFileValidates(t *testing.T) {
	dc := testenv.Tool(t, "docker-compose")
	const adminKey, encKey = "0123456789abcdef0123456789abcdef", "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
	check := func(adminKey, encKey string) ([]byte, error) {
		cmd := exec.Command(dc, "-f", composeFile, "config", "-q")
		cmd.Env = append(os.Environ(), "HOOKRELAY_ADMIN_KEY="+adminKey, "HOOKRELAY_ENCRYPTION_KEYS="+encKey)
		return cmd.CombinedOutput()
	}
	if out, err := check(adminKey, encKey); err != nil {
		t.Fatalf("docker-compose config: %v\n%s", err, out)
	}
	if out, err := check("", encKey); err == nil || !strings.Contains(string(out), "HOOKRELAY_ADMIN_KEY") {
		t.Fatalf("without HOOKRELAY_ADMIN_KEY: %v\n%s", err, out)
	}
	if out, err := check(adminKey, ""); err == nil || !strings.Contains(string(out), "HOOKRELAY_ENCRYPTION_KEYS") {
		t.Fatalf("without HOOKRELAY_ENCRYPTION_KEYS: %v\n%s", err, out)
	}
}

// TestComposeNamesAreConfigs: every hookrelay setting docker-compose.yml
// gives (HOOKRELAY_*, TEMPORAL_*, DATABASE_URL, outside the images of
// Temporal's own) is one config/ reads.
func TestComposeNamesAreConfigs(t *testing.T) {
	b, err := os.ReadFile(composeFile)
	if err != nil {
		t.Fatal(err)
	}
	names := regexp.MustCompile(`(?m)^\s+((?:HOOKRELAY|TEMPORAL)_[A-Z_]+|DATABASE_URL):`).FindAllStringSubmatch(string(b), -1)
	if len(names) < 8 {
		t.Fatalf("only %d settings found in %s", len(names), composeFile)
	}
	for _, m := range names {
		if !slices.Contains(config.Variables(), m[1]) {
			t.Errorf("%s sets %s, which config/ does not read", composeFile, m[1])
		}
	}
}
