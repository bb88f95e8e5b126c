package config

import (
	"fmt"
	"net/netip"
	"strconv"

	"github.com/hookrelay/hookrelay/egress"
)

// Environment variables of hookrelay's safety settings (docs/security.md).
const (
	EnvAdminKey       = "HOOKRELAY_ADMIN_KEY"
	EnvInsecureNoAuth = "HOOKRELAY_INSECURE_NO_AUTH"
	EnvEgressAllow    = "HOOKRELAY_EGRESS_ALLOW"
)

// MinAdminKeyLength is the shortest admin key accepted.
const MinAdminKeyLength = 24

// Security is who may call the API and where deliveries may go.
type Security struct {
	// AdminKey manages accounts and API keys (HOOKRELAY_ADMIN_KEY).
	AdminKey string
	// InsecureNoAuth serves requests without credentials as the default
	// account (HOOKRELAY_INSECURE_NO_AUTH=true): for local trials only.
	InsecureNoAuth bool
	// EgressAllow are the networks deliveries may reach although the deny
	// list covers them (HOOKRELAY_EGRESS_ALLOW, comma-separated CIDRs).
	EgressAllow []netip.Prefix
}

func (c *Config) loadSecurity(getenv func(string) string) error {
	c.Security.AdminKey = getenv(EnvAdminKey)
	if k := c.Security.AdminKey; k != "" && len(k) < MinAdminKeyLength {
		return fmt.Errorf("config: %s is %d characters: want at least %d (for example `openssl rand -hex 32`)",
			EnvAdminKey, len(k), MinAdminKeyLength)
	}
	if v := getenv(EnvInsecureNoAuth); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("config: %s=%q: want true or false", EnvInsecureNoAuth, v)
		}
		c.Security.InsecureNoAuth = b
	}
	allow, err := egress.ParsePrefixes(getenv(EnvEgressAllow))
	if err != nil {
		return fmt.Errorf("config: %s: %w", EnvEgressAllow, err)
	}
	c.Security.EgressAllow = allow
	return nil
}
