package config

import (
	"fmt"
	"net/url"
	"strings"
)

// EnvTemporalUIURL is the Temporal Web UI's base URL the web console links
// each delivery's workflow to (docs/console.md).
const EnvTemporalUIURL = "HOOKRELAY_TEMPORAL_UI_URL"

// loadConsole reads the web console's settings: the Temporal Web UI's base
// URL, an absolute http or https URL kept without its trailing slash; empty
// links no workflow (`hookrelay dev` links its own UI).
func (c *Config) loadConsole(getenv func(string) string) error {
	v := strings.TrimRight(strings.TrimSpace(getenv(EnvTemporalUIURL)), "/")
	if v == "" {
		return nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("config: %s=%q: want an absolute http or https URL", EnvTemporalUIURL, v)
	}
	c.TemporalUIURL = v
	return nil
}
