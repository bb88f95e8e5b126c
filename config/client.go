package config

import (
	"fmt"
	"net/url"
	"strings"
)

// Environment variables of the management commands (`hookrelay
// subscriptions`, `hookrelay publish`, …; docs/cli.md): the client side,
// read by no server, so they are apart from Variables().
const (
	EnvURL    = "HOOKRELAY_URL"
	EnvAPIKey = "HOOKRELAY_API_KEY"
)

// DefaultURL is where the management commands find the API by default:
// `hookrelay dev`'s address.
const DefaultURL = "http://127.0.0.1:8080"

// ClientVariables are the names of the environment variables the
// management commands read; Variables() are the servers'.
func ClientVariables() []string { return []string{EnvURL, EnvAPIKey} }

// Client is how the management commands reach the API.
type Client struct {
	// URL is the API's base URL (HOOKRELAY_URL, default DefaultURL).
	URL string
	// APIKey is the bearer credential (HOOKRELAY_API_KEY): an account's
	// hr_ key, or the admin key for `hookrelay keys`; empty sends none
	// (an API in open mode).
	APIKey string
}

// LoadClient reads the management commands' settings through getenv.
func LoadClient(getenv func(string) string) (Client, error) {
	c := Client{URL: strings.TrimRight(or(getenv(EnvURL), DefaultURL), "/"), APIKey: strings.TrimSpace(getenv(EnvAPIKey))}
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return c, fmt.Errorf("config: %s=%q: want an http or https URL such as %s", EnvURL, c.URL, DefaultURL)
	}
	return c, nil
}
