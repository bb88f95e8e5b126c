package config_test

import (
	"testing"

	"github.com/hookrelay/hookrelay/config"
)

// TestTemporalUIURL: the console's Temporal Web UI link base is kept without
// its trailing slash, empty by default, and anything but an absolute http
// or https URL stops the start.
func TestTemporalUIURL(t *testing.T) {
	load := func(v string) (config.Config, error) {
		return load(map[string]string{config.EnvTemporalUIURL: v})
	}
	for v, want := range map[string]string{"": "", "https://temporal.example/": "https://temporal.example",
		"http://127.0.0.1:8233": "http://127.0.0.1:8233"} {
		if cfg, err := load(v); err != nil || cfg.TemporalUIURL != want {
			t.Errorf("%q: %q (%v), want %q", v, cfg.TemporalUIURL, err, want)
		}
	}
	for _, bad := range []string{"temporal.example", "ftp://temporal.example", "http://"} {
		if _, err := load(bad); err == nil {
			t.Errorf("%s=%q loaded", config.EnvTemporalUIURL, bad)
		}
	}
}
