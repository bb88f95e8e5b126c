package config

import (
	"fmt"
	"time"
)

// Environment variables of retention (docs/operations.md#retention).
const (
	EnvRetention           = "HOOKRELAY_RETENTION"
	EnvDeadLetterRetention = "HOOKRELAY_DEAD_LETTER_RETENTION"
)

// Default retentions: 30 days for what finished, 90 for dead letters.
const (
	DefaultRetention           = 30 * 24 * time.Hour
	DefaultDeadLetterRetention = 90 * 24 * time.Hour
)

// minRetention is the shortest retention accepted (besides 0, forever).
const minRetention = time.Hour

// Retention is how long the worker keeps what finished; 0 keeps it forever.
type Retention struct {
	// Finished is how long deliveries that ended, their attempts and
	// their events are kept (HOOKRELAY_RETENTION, default 720h).
	Finished time.Duration
	// DeadLetters is how long dead letters are kept, and with them their
	// deliveries and events (HOOKRELAY_DEAD_LETTER_RETENTION, default
	// 2160h).
	DeadLetters time.Duration
}

func (c *Config) loadRetention(getenv func(string) string) error {
	var err error
	if c.Retention.Finished, err = retentionVar(getenv, EnvRetention, DefaultRetention); err != nil {
		return err
	}
	c.Retention.DeadLetters, err = retentionVar(getenv, EnvDeadLetterRetention, DefaultDeadLetterRetention)
	return err
}

// retentionVar reads a Go duration (720h) of at least an hour, or 0.
func retentionVar(getenv func(string) string, name string, def time.Duration) (time.Duration, error) {
	v := getenv(name)
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 || (d > 0 && d < minRetention) {
		return 0, fmt.Errorf("config: %s=%q: want 0 (keep forever) or a duration of at least 1h, like 720h", name, v)
	}
	return d, nil
}
