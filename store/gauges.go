package store

import (
	"context"
	"fmt"

	"github.com/hookrelay/hookrelay/metrics"
	"github.com/hookrelay/hookrelay/policies"
)

// Gauges reads the installation-wide figures /metrics shows: endpoints by
// state, deliveries waiting on a disabled or frozen endpoint, dead letters.
func (s *Store) Gauges(ctx context.Context) (metrics.Gauges, error) {
	g := metrics.Gauges{EndpointsByState: map[string]int{}}
	var rows []struct {
		State string `db:"state"`
		N     int    `db:"n"`
	}
	if err := s.db.SelectContext(ctx, &rows, `SELECT state, count(*) AS n FROM endpoints GROUP BY state`); err != nil {
		return g, fmt.Errorf("store: endpoint gauges: %w", err)
	}
	for _, r := range rows {
		g.EndpointsByState[r.State] = r.N
	}
	err := s.db.QueryRowxContext(ctx, `SELECT
			(SELECT count(*) FROM deliveries WHERE status = $1),
			(SELECT count(*) FROM dead_letters)`, policies.StatusWaiting).Scan(&g.WaitingDeliveries, &g.DeadLetters)
	if err != nil {
		return g, fmt.Errorf("store: delivery gauges: %w", err)
	}
	return g, nil
}
