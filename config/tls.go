package config

import "fmt"

// Environment variables of the API's own TLS (docs/azure.md).
const (
	EnvTLSCert = "HOOKRELAY_TLS_CERT"
	EnvTLSKey  = "HOOKRELAY_TLS_KEY"
)

// TLS is the certificate `hookrelay api` (and `dev`) serves HTTPS with;
// both empty serve plain HTTP (behind a TLS-terminating proxy, say).
type TLS struct {
	// CertFile is a PEM certificate chain (HOOKRELAY_TLS_CERT).
	CertFile string
	// KeyFile is its PEM private key (HOOKRELAY_TLS_KEY).
	KeyFile string
}

// On tells whether the API serves HTTPS.
func (t TLS) On() bool { return t.CertFile != "" }

// loadTLS reads c.TLS, both files or neither, and c.PublicURL, which
// defaults to the API's own address with the scheme it serves.
func (c *Config) loadTLS(getenv func(string) string) error {
	c.TLS = TLS{CertFile: getenv(EnvTLSCert), KeyFile: getenv(EnvTLSKey)}
	scheme := "http://"
	if c.TLS.On() {
		scheme = "https://"
	}
	c.PublicURL = or(getenv(EnvPublicURL), scheme+c.HTTPAddr)
	switch {
	case c.TLS.CertFile != "" && c.TLS.KeyFile == "":
		return fmt.Errorf("config: %s is set but %s is not: give both (the certificate and its key) or neither", EnvTLSCert, EnvTLSKey)
	case c.TLS.CertFile == "" && c.TLS.KeyFile != "":
		return fmt.Errorf("config: %s is set but %s is not: give both (the certificate and its key) or neither", EnvTLSKey, EnvTLSCert)
	}
	return nil
}
