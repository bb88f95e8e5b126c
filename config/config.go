// Package config reads hookrelay's configuration from the environment, once,
// in one place.
package config

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/hookrelay/hookrelay/policies"
)

// Environment variables of the core settings.
const (
	EnvDatabaseURL       = "DATABASE_URL"
	EnvTemporalAddress   = "TEMPORAL_ADDRESS"
	EnvTemporalNamespace = "TEMPORAL_NAMESPACE"
	EnvHTTPAddr          = "HOOKRELAY_HTTP_ADDR"
	EnvDataDir           = "HOOKRELAY_DATA_DIR"
	EnvPGPort            = "HOOKRELAY_PG_PORT"
	EnvTemporalUIPort    = "HOOKRELAY_TEMPORAL_UI_PORT"
	// EnvTemporalMetricsPort serves the dev server's own metrics.
	EnvTemporalMetricsPort = "HOOKRELAY_TEMPORAL_METRICS_PORT"
	EnvLogLevel            = "HOOKRELAY_LOG_LEVEL"
	EnvPublicURL           = "HOOKRELAY_PUBLIC_URL"
)

// Variables are the names of every environment variable hookrelay reads.
func Variables() []string {
	return []string{EnvDatabaseURL, EnvTemporalAddress, EnvTemporalNamespace, EnvHTTPAddr, EnvDataDir,
		EnvPGPort, EnvTemporalUIPort, EnvTemporalMetricsPort, EnvLogLevel, EnvPublicURL, EnvEdgeMaxDeliveryAttempts, EnvEdgeEventTTLSeconds,
		EnvAdminKey, EnvInsecureNoAuth, EnvEgressAllow, EnvMetricsAddr, EnvMetricsToken,
		EnvTemporalTLS, EnvTemporalTLSCA, EnvTemporalTLSCert, EnvTemporalTLSKey, EnvTemporalTLSServerName,
		EnvTemporalAPIKey, EnvWorkerConcurrency, EnvFirstAttemptsPerEndpoint, EnvRetriesPerSecond, EnvStartsPerEndpoint,
		EnvTroubledStartsPerSecond, EnvPublishesPerType, EnvDBConnections, EnvAPIWorker, EnvRetention, EnvDeadLetterRetention,
		EnvEventGridTopic, EnvEventGridSASSecret, EnvTLSCert, EnvTLSKey,
		EnvOTLPEndpoint, EnvOTLPTracesEndpoint, EnvOTLPProtocol, EnvOTLPTracesProtocol, EnvOTelSDKDisabled,
		EnvTemporalUIURL, EnvEventGridDeadLetterDelay, EnvAzureStorageConnectionString,
		EnvAzureStorageConnectionStrings, EnvAzureStorageEntraAccounts, EnvEncryptionKeys, EnvEncryptionKeysFile}
}

// Config is every setting hookrelay reads from the environment.
type Config struct {
	// DatabaseURL is the PostgreSQL URL (DATABASE_URL). Empty under `dev`
	// means: start the project-local cluster.
	DatabaseURL string
	// TemporalAddress is the Temporal frontend (TEMPORAL_ADDRESS).
	TemporalAddress string
	// TemporalNamespace is the Temporal namespace (TEMPORAL_NAMESPACE).
	TemporalNamespace string
	// HTTPAddr is where the API listens (HOOKRELAY_HTTP_ADDR).
	HTTPAddr string
	// PublicURL is where the API is reached from outside
	// (HOOKRELAY_PUBLIC_URL; default http://HTTPAddr): the base of Event
	// Grid's validationUrl.
	PublicURL string
	// DataDir holds the dev cluster and Temporal's SQLite file (HOOKRELAY_DATA_DIR).
	DataDir string
	// PostgresPort is the dev cluster's port (HOOKRELAY_PG_PORT).
	PostgresPort int
	// TemporalUIPort is the dev Web UI's port (HOOKRELAY_TEMPORAL_UI_PORT).
	TemporalUIPort int
	// TemporalMetricsPort, when set, is where the dev server serves its
	// own Prometheus metrics (HOOKRELAY_TEMPORAL_METRICS_PORT; 0: none).
	TemporalMetricsPort int
	// LogLevel is debug, info, warn or error (HOOKRELAY_LOG_LEVEL).
	LogLevel slog.Level
	// EdgeDefaults are the Event Grid on IoT Edge limits
	// (broker__defaultMaxDeliveryAttempts, broker__defaultEventTimeToLiveInSeconds).
	EdgeDefaults policies.EdgeDefaults
	// Security holds the API's credentials and the egress allow list.
	Security Security
	// Metrics says where metrics are served.
	Metrics Metrics
	// Temporal is the Temporal connection's TLS and API key.
	Temporal Temporal
	// APIWorker makes `hookrelay api` run a worker on the workflows' task
	// queue (HOOKRELAY_API_WORKER, default true), so that the deliveries
	// it starts start eagerly there and make their first attempt in the
	// process that stored them; false leaves all delivery work to
	// `hookrelay worker`.
	APIWorker bool
	// WorkerConcurrency bounds the attempts in flight on each of a worker's
	// delivery queues (HOOKRELAY_WORKER_CONCURRENCY, default 200).
	WorkerConcurrency int
	// FirstAttemptsPerEndpoint bounds the first attempts one endpoint makes
	// at once inside a process's workflow tasks, as local activities
	// (HOOKRELAY_FIRST_ATTEMPTS_PER_ENDPOINT; 0, the default, is the
	// worker's own: activities.DefaultLocalPerEndpoint); past it they are
	// made on the deliveries queue (docs/endpoints.md#isolation).
	FirstAttemptsPerEndpoint int
	// RetriesPerSecond bounds the retries all worker processes together
	// start per second (HOOKRELAY_RETRIES_PER_SECOND, default
	// DefaultRetriesPerSecond); past it they wait their turn on the
	// retries queue, endpoint by endpoint (docs/endpoints.md#isolation).
	RetriesPerSecond int
	// StartsPerEndpoint bounds the start queue's workers one endpoint's
	// burst holds at once beside others (HOOKRELAY_STARTS_PER_ENDPOINT; 0, the
	// default, is the queue's own: starter.DefaultStartsPerEndpoint)
	// (docs/endpoints.md#isolation).
	StartsPerEndpoint int
	// TroubledStartsPerSecond bounds the starts a second of an endpoint in
	// trouble while other endpoints' deliveries are being started
	// (HOOKRELAY_TROUBLED_STARTS_PER_SECOND; 0, the default, is the
	// queue's own: starter.DefaultTroubledPerSecond).
	TroubledStartsPerSecond int
	// PublishesPerType bounds the events of one type one account has being
	// stored at once (HOOKRELAY_PUBLISHES_PER_TYPE; 0, the default, is the
	// API's own: api.DefaultPublishesPerType).
	PublishesPerType int
	// DBConnections bounds each connection pool to PostgreSQL
	// (HOOKRELAY_DB_CONNECTIONS; 0, the default, is the store's own:
	// store.DefaultConnections).
	DBConnections int
	// Retention is how long the worker keeps what finished.
	Retention Retention
	// EventGrid is the accounts' Event Grid topics and SAS tokens.
	EventGrid EventGrid
	// DeadLetterBlobs are the Azure storage accounts Event Grid dead letters
	// are written to, and the delay before each write.
	DeadLetterBlobs DeadLetterBlobs
	// TLS is the API's own certificate, if it serves HTTPS.
	TLS TLS
	// Tracing says whether traces are exported (docs/tracing.md).
	Tracing Tracing
	// Encryption is the key ring of the stored secrets.
	Encryption Encryption
	// TemporalUIURL is the Temporal Web UI the web console links workflows
	// to (HOOKRELAY_TEMPORAL_UI_URL); empty links none, but under
	// `hookrelay dev`, which links its own.
	TemporalUIURL string
}

// Load reads the configuration through getenv, applying defaults.
func Load(getenv func(string) string) (Config, error) {
	c := Config{
		DatabaseURL:       getenv(EnvDatabaseURL),
		TemporalAddress:   or(getenv(EnvTemporalAddress), "127.0.0.1:7233"),
		TemporalNamespace: or(getenv(EnvTemporalNamespace), "default"),
		HTTPAddr:          or(getenv(EnvHTTPAddr), "127.0.0.1:8080"),
		DataDir:           or(getenv(EnvDataDir), ".hookrelay"),
	}
	if err := c.loadTLS(getenv); err != nil {
		return c, err
	}
	var err error
	if c.PostgresPort, err = intVar(getenv, EnvPGPort, 54329); err != nil {
		return c, err
	}
	if c.TemporalUIPort, err = intVar(getenv, EnvTemporalUIPort, 8233); err != nil {
		return c, err
	}
	if c.TemporalMetricsPort, err = intVar(getenv, EnvTemporalMetricsPort, 0); err != nil {
		return c, err
	}
	if err := c.LogLevel.UnmarshalText([]byte(or(getenv(EnvLogLevel), "info"))); err != nil {
		return c, fmt.Errorf("config: HOOKRELAY_LOG_LEVEL: %w", err)
	}
	if err := c.loadEdge(getenv); err != nil {
		return c, err
	}
	if err := c.loadSecurity(getenv); err != nil {
		return c, err
	}
	c.loadMetrics(getenv)
	if err := c.loadTemporal(getenv); err != nil {
		return c, err
	}
	if err := c.loadRetention(getenv); err != nil {
		return c, err
	}
	if err := c.loadConsole(getenv); err != nil {
		return c, err
	}
	if err := c.loadEventGrid(getenv); err != nil {
		return c, err
	}
	if err := c.loadTracing(getenv); err != nil {
		return c, err
	}
	if err := c.loadEncryption(getenv); err != nil {
		return c, err
	}
	return c, nil
}

func or(v, def string) string {
	if strings.TrimSpace(v) == "" {
		return def
	}
	return v
}

func intVar(getenv func(string) string, name string, def int) (int, error) {
	v := getenv(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 || n > 65535 {
		return 0, fmt.Errorf("config: %s=%q: want a port number (1-65535)", name, v)
	}
	return n, nil
}
