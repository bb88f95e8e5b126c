package config_test

import (
	"testing"

	"github.com/hookrelay/hookrelay/config"
)

// TestShares: each bound of docs/endpoints.md#isolation is 0 (its
// component's own default) when unset, taken when a count, and anything
// else stops the start.
func TestShares(t *testing.T) {
	for name, field := range map[string]func(config.Config) int{
		config.EnvStartsPerEndpoint:       func(c config.Config) int { return c.StartsPerEndpoint },
		config.EnvTroubledStartsPerSecond: func(c config.Config) int { return c.TroubledStartsPerSecond },
		config.EnvPublishesPerType:        func(c config.Config) int { return c.PublishesPerType },
		config.EnvDBConnections:           func(c config.Config) int { return c.DBConnections },
	} {
		for v, want := range map[string]int{"": 0, "1": 1, "8": 8} {
			if cfg, err := load(map[string]string{name: v}); err != nil || field(cfg) != want {
				t.Errorf("%s=%q: %d (%v), want %d", name, v, field(cfg), err, want)
			}
		}
		for _, bad := range []string{"0", "-2", "four", "70000"} {
			if _, err := load(map[string]string{name: bad}); err == nil {
				t.Errorf("%s=%q loaded", name, bad)
			}
		}
	}
}
