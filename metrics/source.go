package metrics

import (
	"context"
	"database/sql"
	"log/slog"
	"time"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Gauges are the figures read from PostgreSQL at each scrape: they hold for
// the whole installation, whichever process is scraped.
type Gauges struct {
	// EndpointsByState counts endpoints by state (enabled, disabled, frozen).
	EndpointsByState map[string]int
	// WaitingDeliveries counts deliveries parked on a disabled or frozen
	// endpoint.
	WaitingDeliveries int
	// DeadLetters counts the dead letters stored.
	DeadLetters int
}

// Source reads the gauges; *store.Store is one.
type Source interface {
	Gauges(ctx context.Context) (Gauges, error)
}

var (
	endpointsDesc = prometheus.NewDesc(Namespace+"_endpoints", "Endpoints by state.", []string{"state"}, nil)
	waitingDesc   = prometheus.NewDesc(Namespace+"_deliveries_waiting",
		"Deliveries waiting on a disabled or frozen endpoint.", nil, nil)
	storedDLDesc = prometheus.NewDesc(Namespace+"_dead_letters_stored", "Dead letters stored.", nil, nil)
)

// sourceCollector turns a Source into gauges at each scrape.
type sourceCollector struct {
	src    Source
	logger *slog.Logger
}

// WithPool adds the statistics of a PostgreSQL connection pool, labelled
// db_name=name (go_sql_* metrics, client_golang's collector): how often and
// how long callers waited for a connection (go_sql_wait_count_total,
// go_sql_wait_duration_seconds_total) shows a pool too small for its load.
func (m *Metrics) WithPool(name string, db *sql.DB) {
	m.Registry.MustRegister(collectors.NewDBStatsCollector(db, name))
}

// WithSource adds the gauges read from src to the registry (the API does;
// the worker does not, so that they are not counted twice).
func (m *Metrics) WithSource(src Source, logger *slog.Logger) {
	m.Registry.MustRegister(sourceCollector{src: src, logger: logger})
}

func (c sourceCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- endpointsDesc
	ch <- waitingDesc
	ch <- storedDLDesc
}

func (c sourceCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	g, err := c.src.Gauges(ctx)
	if err != nil {
		c.logger.WarnContext(ctx, "metrics_gauges_failed", "error", err)
		ch <- prometheus.NewInvalidMetric(endpointsDesc, err)
		return
	}
	for _, state := range []string{policies.StateEnabled, policies.StateDisabled, policies.StateFrozen} {
		ch <- prometheus.MustNewConstMetric(endpointsDesc, prometheus.GaugeValue, float64(g.EndpointsByState[state]), state)
	}
	ch <- prometheus.MustNewConstMetric(waitingDesc, prometheus.GaugeValue, float64(g.WaitingDeliveries))
	ch <- prometheus.MustNewConstMetric(storedDLDesc, prometheus.GaugeValue, float64(g.DeadLetters))
}
