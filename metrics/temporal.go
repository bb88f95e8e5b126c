package metrics

import (
	"io"
	"time"

	"github.com/uber-go/tally/v4"
	tallyprom "github.com/uber-go/tally/v4/prometheus"
	"go.temporal.io/sdk/client"
	sdktally "go.temporal.io/sdk/contrib/tally"
)

// TemporalHandler is the Temporal SDK's metrics handler (its client and
// worker metrics: temporal_request, temporal_workflow_task_*,
// temporal_activity_*, …) reporting into the registry, the way Temporal's
// samples wire it. Close the io.Closer when the process stops.
func (m *Metrics) TemporalHandler() (client.MetricsHandler, io.Closer) {
	reporter := tallyprom.NewReporter(tallyprom.Options{
		Registerer: m.Registry, Gatherer: m.Registry, DefaultTimerType: tallyprom.HistogramTimerType,
		OnRegisterError: func(err error) { m.registerErrors.Inc() },
	})
	scope, closer := tally.NewRootScope(tally.ScopeOptions{
		CachedReporter:  reporter,
		Separator:       tallyprom.DefaultSeparator,
		SanitizeOptions: &sdktally.PrometheusSanitizeOptions,
	}, time.Second)
	return sdktally.NewMetricsHandler(sdktally.NewPrometheusNamingScope(scope)), closer
}
