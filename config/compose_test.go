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

// TestComposeGivesPublicURL: issue 53, item 7. The services that send Event
// Grid's validation events (the API, whose worker runs them too, and the
// workers) get HOOKRELAY_PUBLIC_URL, the base of its validationUrl, from the
// environment `docker compose` runs in.
func TestComposeGivesPublicURL(t *testing.T) {
	dc := testenv.Tool(t, "docker-compose")
	const public = "https://hooks.example.com"
	cmd := exec.Command(dc, "-f", composeFile, "config")
	cmd.Env = append(os.Environ(), "HOOKRELAY_ADMIN_KEY=0123456789abcdef0123456789abcdef", config.EnvPublicURL+"="+public,
		config.EnvEncryptionKeys+"=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("docker-compose config: %v\n%s", err, out)
	}
	services := regexp.MustCompile(`(?m)^  (\S+):\n((?:    .*\n|\n)*)`).FindAllStringSubmatch(string(out), -1)
	got := map[string]bool{}
	for _, s := range services {
		got[s[1]] = strings.Contains(s[2], config.EnvPublicURL+": "+public)
	}
	for _, name := range []string{"api", "worker"} {
		if !got[name] {
			t.Errorf("service %s does not get %s=%s (services: %v)\n%s", name, config.EnvPublicURL, public, got, out)
		}
	}
}
