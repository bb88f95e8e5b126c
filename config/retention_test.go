package config_test

import (
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/config"
)

// TestRetention: the retentions default to 30 and 90 days, 0 keeps forever,
// and anything else but a duration of at least an hour stops the start.
func TestRetention(t *testing.T) {
	load := func(finished, deadLetters string) (config.Config, error) {
		env := map[string]string{config.EnvRetention: finished, config.EnvDeadLetterRetention: deadLetters}
		return config.Load(func(k string) string { return env[k] })
	}
	for _, c := range []struct {
		finished, deadLetters string
		want                  config.Retention
	}{
		{"", "", config.Retention{Finished: 720 * time.Hour, DeadLetters: 2160 * time.Hour}},
		{"0", "0", config.Retention{}},
		{"168h", "1h", config.Retention{Finished: 168 * time.Hour, DeadLetters: time.Hour}},
	} {
		cfg, err := load(c.finished, c.deadLetters)
		if err != nil || cfg.Retention != c.want {
			t.Errorf("%q %q: %+v (%v), want %+v", c.finished, c.deadLetters, cfg.Retention, err, c.want)
		}
	}
	for _, bad := range []string{"30d", "-1h", "59m", "soon"} {
		if _, err := load(bad, ""); err == nil {
			t.Errorf("%s=%q loaded", config.EnvRetention, bad)
		}
		if _, err := load("", bad); err == nil {
			t.Errorf("%s=%q loaded", config.EnvDeadLetterRetention, bad)
		}
	}
}
