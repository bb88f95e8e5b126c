package config

// Environment variables of hookrelay's metrics (docs/operations.md#metrics).
const (
	EnvMetricsAddr  = "HOOKRELAY_METRICS_ADDR"
	EnvMetricsToken = "HOOKRELAY_METRICS_TOKEN"
)

// Metrics is where Prometheus scrapes hookrelay.
type Metrics struct {
	// Addr is where `hookrelay worker` serves /metrics
	// (HOOKRELAY_METRICS_ADDR, for example 127.0.0.1:9464); empty serves
	// none. The API serves /metrics on its own address.
	Addr string
	// Token lets a scraper read the API's /metrics and nothing else
	// (HOOKRELAY_METRICS_TOKEN); the admin key reads it too.
	Token string
}

func (c *Config) loadMetrics(getenv func(string) string) {
	c.Metrics = Metrics{Addr: getenv(EnvMetricsAddr), Token: getenv(EnvMetricsToken)}
}
