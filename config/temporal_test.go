package config_test

import (
	"testing"

	"github.com/hookrelay/hookrelay/config"
)

// TestStartsPerEndpoint: HOOKRELAY_STARTS_PER_ENDPOINT is 0 (the start
// queue's own default) when unset, taken when a count, and anything else
// stops the start.
func TestStartsPerEndpoint(t *testing.T) {
	load := func(v string) (config.Config, error) {
		return load(map[string]string{config.EnvStartsPerEndpoint: v})
	}
	for v, want := range map[string]int{"": 0, "1": 1, "8": 8} {
		if cfg, err := load(v); err != nil || cfg.StartsPerEndpoint != want {
			t.Errorf("%q: %d (%v), want %d", v, cfg.StartsPerEndpoint, err, want)
		}
	}
	for _, bad := range []string{"0", "-2", "four", "70000"} {
		if _, err := load(bad); err == nil {
			t.Errorf("%s=%q loaded", config.EnvStartsPerEndpoint, bad)
		}
	}
}
