// Package metrics is hookrelay's Prometheus instrumentation: one registry per
// process, served at /metrics, holding hookrelay's own counters and
// histograms, the Go runtime's, the Temporal SDK's (through Handler) and,
// on the API, gauges read from PostgreSQL at each scrape (Source). Labels
// stay bounded: statuses, policies, outcomes and error kinds, never a URL or
// an id. A nil *Metrics records nothing, so code that is given none (a
// test, a tool) needs no checks.
package metrics

import (
	"net/http"
	"time"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Namespace prefixes every metric of hookrelay's own.
const Namespace = "hookrelay"

// Metrics are a process's metrics.
type Metrics struct {
	// Registry holds every metric below and is what /metrics serves.
	Registry           *prometheus.Registry
	eventsPublished    prometheus.Counter
	operational        *prometheus.CounterVec
	deliveriesFinished *prometheus.CounterVec
	deadLetters        prometheus.Counter
	deadLetterBlobs    *prometheus.CounterVec
	attempts           *prometheus.CounterVec
	attemptDuration    *prometheus.HistogramVec
	firstAttemptLag    prometheus.Histogram
	publishToDelivered prometheus.Histogram
	sweeperStarts      prometheus.Counter
	reconciled         *prometheus.CounterVec
	pruned             *prometheus.CounterVec
	registerErrors     prometheus.Counter
}

// latencyBuckets span 5 ms to about 2.8 hours.
var latencyBuckets = prometheus.ExponentialBuckets(0.005, 3, 15)

// New makes a process's metrics on a registry of their own, with the Go
// runtime and process collectors.
func New() *Metrics {
	r := prometheus.NewRegistry()
	f := func(c prometheus.Collector) prometheus.Collector { r.MustRegister(c); return c }
	counter := func(name, help string) prometheus.Counter {
		return f(prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help})).(prometheus.Counter)
	}
	m := &Metrics{Registry: r,
		eventsPublished: counter("events_published_total", "Events published through the API (duplicates not counted)."),
		operational: f(prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "operational_events_total",
			Help: "Operational events hookrelay published, by type."}, []string{"type"})).(*prometheus.CounterVec),
		deliveriesFinished: f(prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "deliveries_finished_total",
			Help: "Deliveries that ended, by final status and policy."}, []string{"status", "policy"})).(*prometheus.CounterVec),
		deadLetters: counter("dead_letters_total", "Dead letters made."),
		deadLetterBlobs: f(prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "dead_letter_blobs_total",
			Help: "Event Grid dead letters written to Azure Blob Storage, by outcome (written, given_up)."}, []string{"outcome"})).(*prometheus.CounterVec),
		attempts: f(prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "attempts_total",
			Help: "HTTP attempts made, by outcome (success, failure) and error kind."}, []string{"outcome", "error_kind"})).(*prometheus.CounterVec),
		attemptDuration: f(prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "attempt_duration_seconds",
			Help: "Duration of HTTP attempts, by outcome.", Buckets: latencyBuckets}, []string{"outcome"})).(*prometheus.HistogramVec),
		firstAttemptLag: f(prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: Namespace, Name: "first_attempt_lag_seconds",
			Help: "From a delivery's creation (its publication) to the start of its first attempt.", Buckets: latencyBuckets})).(prometheus.Histogram),
		publishToDelivered: f(prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: Namespace, Name: "publish_to_delivered_seconds",
			Help: "From a delivery's creation to its being delivered.", Buckets: latencyBuckets})).(prometheus.Histogram),
		sweeperStarts: counter("sweeper_starts_total", "Deliveries the sweeper started (their first start had failed or was lost)."),
		reconciled: f(prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "reconciled_deliveries_total",
			Help: "Deliveries in flight whose workflow the sweeper found closed or gone, by what it did (outcome)."}, []string{"outcome"})).(*prometheus.CounterVec),
		pruned: f(prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "pruned_rows_total",
			Help: "Rows retention deleted, by table."}, []string{"table"})).(*prometheus.CounterVec),
		registerErrors: counter("temporal_metric_errors_total", "Temporal SDK metrics that could not be registered (a clash of names)."),
	}
	r.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the registry in Prometheus' text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry})
}

// Published counts n events published through the API.
func (m *Metrics) Published(n int) {
	if m != nil {
		m.eventsPublished.Add(float64(n))
	}
}

// Operational counts one operational event of type typ.
func (m *Metrics) Operational(typ string) {
	if m != nil {
		m.operational.WithLabelValues(typ).Inc()
	}
}

// Finished counts a delivery that ended with status under policy, after
// sinceCreated; deadLetter says whether a dead letter was made.
func (m *Metrics) Finished(status, policy string, sinceCreated time.Duration, deadLetter bool) {
	if m == nil {
		return
	}
	m.deliveriesFinished.WithLabelValues(status, policy).Inc()
	if status == string(policies.StatusDelivered) {
		m.publishToDelivered.Observe(sinceCreated.Seconds())
	}
	if deadLetter {
		m.deadLetters.Inc()
	}
}

// Attempt counts one HTTP attempt; first attempts also record their lag
// since the delivery was created.
func (m *Metrics) Attempt(success bool, errorKind string, d time.Duration, first bool, lag time.Duration) {
	if m == nil {
		return
	}
	outcome := "failure"
	if success {
		outcome = "success"
	}
	if errorKind == "" {
		errorKind = "none"
	}
	m.attempts.WithLabelValues(outcome, errorKind).Inc()
	m.attemptDuration.WithLabelValues(outcome).Observe(d.Seconds())
	if first {
		m.firstAttemptLag.Observe(lag.Seconds())
	}
}

// DeadLetterBlob counts a dead-letter blob written or given up (outcome).
func (m *Metrics) DeadLetterBlob(outcome string) {
	if m != nil {
		m.deadLetterBlobs.WithLabelValues(outcome).Inc()
	}
}

// SweeperStarted counts n deliveries the sweeper started.
func (m *Metrics) SweeperStarted(n int) {
	if m != nil {
		m.sweeperStarts.Add(float64(n))
	}
}

// Reconciled counts one delivery the sweeper reconciled with its workflow:
// outcome is terminated, cancelled, timed_out, failed (ended), restarted,
// or start_failed (ended after its starts failed).
func (m *Metrics) Reconciled(outcome string) {
	if m != nil {
		m.reconciled.WithLabelValues(outcome).Inc()
	}
}

// Pruned counts n rows of table that retention deleted.
func (m *Metrics) Pruned(table string, n int64) {
	if m != nil && n > 0 {
		m.pruned.WithLabelValues(table).Add(float64(n))
	}
}
