package config

import (
	"fmt"
	"strconv"
)

// Environment variables of the Temporal connection and the workers
// (docs/production.md).
const (
	EnvTemporalTLS           = "TEMPORAL_TLS"
	EnvTemporalTLSCA         = "TEMPORAL_TLS_CA"
	EnvTemporalTLSCert       = "TEMPORAL_TLS_CERT"
	EnvTemporalTLSKey        = "TEMPORAL_TLS_KEY"
	EnvTemporalTLSServerName = "TEMPORAL_TLS_SERVER_NAME"
	EnvTemporalAPIKey        = "TEMPORAL_API_KEY"
	EnvWorkerConcurrency     = "HOOKRELAY_WORKER_CONCURRENCY"
	EnvAPIWorker             = "HOOKRELAY_API_WORKER"
	// EnvFirstAttemptsPerEndpoint bounds one endpoint's first attempts made
	// at once inside workflow tasks (docs/endpoints.md#isolation).
	EnvFirstAttemptsPerEndpoint = "HOOKRELAY_FIRST_ATTEMPTS_PER_ENDPOINT"
	// EnvRetriesPerSecond bounds the retries all worker processes together
	// start per second (docs/endpoints.md#isolation).
	EnvRetriesPerSecond = "HOOKRELAY_RETRIES_PER_SECOND"
	// EnvStartsPerEndpoint bounds the start queue's workers one endpoint's
	// burst holds at once while another endpoint's deliveries are being
	// started (docs/endpoints.md#isolation).
	EnvStartsPerEndpoint = "HOOKRELAY_STARTS_PER_ENDPOINT"
	// EnvTroubledStartsPerSecond paces the starts of an endpoint in
	// trouble (docs/endpoints.md#isolation).
	EnvTroubledStartsPerSecond = "HOOKRELAY_TROUBLED_STARTS_PER_SECOND"
	// EnvPublishesPerType bounds the events of one type one account has
	// being stored at once (docs/endpoints.md#isolation).
	EnvPublishesPerType = "HOOKRELAY_PUBLISHES_PER_TYPE"
	// EnvDBConnections bounds each connection pool to PostgreSQL
	// (docs/endpoints.md#isolation).
	EnvDBConnections = "HOOKRELAY_DB_CONNECTIONS"
)

// DefaultRetriesPerSecond is HOOKRELAY_RETRIES_PER_SECOND's default: on a
// 2-core machine it leaves Temporal most of its time for first attempts
// while thousands of deliveries retry (BENCHMARKS.md).
const DefaultRetriesPerSecond = 20

// Temporal is how hookrelay connects to Temporal beyond its address and
// namespace: TLS (a private CA, mTLS), an API key (Temporal Cloud).
type Temporal struct {
	// TLS turns TLS on (TEMPORAL_TLS=true); any of the files below, or an
	// API key, turns it on too.
	TLS bool
	// CAFile verifies the server (TEMPORAL_TLS_CA); empty: the system roots.
	CAFile string
	// CertFile and KeyFile are the client certificate for mTLS
	// (TEMPORAL_TLS_CERT, TEMPORAL_TLS_KEY); both or neither.
	CertFile, KeyFile string
	// ServerName overrides the name verified (TEMPORAL_TLS_SERVER_NAME).
	ServerName string
	// APIKey authenticates to Temporal Cloud (TEMPORAL_API_KEY).
	APIKey string
}

func (c *Config) loadTemporal(getenv func(string) string) error {
	t := Temporal{CAFile: getenv(EnvTemporalTLSCA), CertFile: getenv(EnvTemporalTLSCert),
		KeyFile: getenv(EnvTemporalTLSKey), ServerName: getenv(EnvTemporalTLSServerName), APIKey: getenv(EnvTemporalAPIKey)}
	if v := getenv(EnvTemporalTLS); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("config: %s=%q: want true or false", EnvTemporalTLS, v)
		}
		t.TLS = b
	}
	if (t.CertFile == "") != (t.KeyFile == "") {
		return fmt.Errorf("config: %s and %s go together", EnvTemporalTLSCert, EnvTemporalTLSKey)
	}
	t.TLS = t.TLS || t.CAFile != "" || t.CertFile != "" || t.APIKey != ""
	c.Temporal = t
	return c.loadWorkers(getenv)
}

// loadWorkers reads the workers' and the start queue's limits, and whether
// the API runs a worker.
func (c *Config) loadWorkers(getenv func(string) string) error {
	n, err := intVar(getenv, EnvWorkerConcurrency, 200)
	if err != nil {
		return fmt.Errorf("config: %s: want 1-65535 attempts in flight per queue", EnvWorkerConcurrency)
	}
	c.WorkerConcurrency = n
	if c.FirstAttemptsPerEndpoint, err = intVar(getenv, EnvFirstAttemptsPerEndpoint, 0); err != nil {
		return fmt.Errorf("config: %s: want 1-65535 first attempts at once per endpoint", EnvFirstAttemptsPerEndpoint)
	}
	if c.RetriesPerSecond, err = intVar(getenv, EnvRetriesPerSecond, DefaultRetriesPerSecond); err != nil {
		return fmt.Errorf("config: %s: want 1-65535 retries a second", EnvRetriesPerSecond)
	}
	if c.StartsPerEndpoint, err = intVar(getenv, EnvStartsPerEndpoint, 0); err != nil {
		return fmt.Errorf("config: %s: want 1-65535 starts at once per endpoint", EnvStartsPerEndpoint)
	}
	if err := c.loadShares(getenv); err != nil {
		return err
	}
	c.APIWorker = true
	if v := getenv(EnvAPIWorker); v != "" {
		if c.APIWorker, err = strconv.ParseBool(v); err != nil {
			return fmt.Errorf("config: %s=%q: want true or false", EnvAPIWorker, v)
		}
	}
	return nil
}

// loadShares reads the bounds that keep one endpoint's trouble from
// delaying the others beyond the workers' (docs/endpoints.md#isolation).
func (c *Config) loadShares(getenv func(string) string) error {
	var err error
	if c.TroubledStartsPerSecond, err = intVar(getenv, EnvTroubledStartsPerSecond, 0); err != nil {
		return fmt.Errorf("config: %s: want 1-65535 starts a second", EnvTroubledStartsPerSecond)
	}
	if c.PublishesPerType, err = intVar(getenv, EnvPublishesPerType, 0); err != nil {
		return fmt.Errorf("config: %s: want 1-65535 publishes at once per event type", EnvPublishesPerType)
	}
	if c.DBConnections, err = intVar(getenv, EnvDBConnections, 0); err != nil {
		return fmt.Errorf("config: %s: want 1-65535 connections", EnvDBConnections)
	}
	return nil
}
