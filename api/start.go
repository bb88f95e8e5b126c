package api

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/hookrelay/hookrelay/store"
)

// startDeliveries starts the workflows of stored deliveries: through the
// start queue when the server has one, so that the answer never waits on
// Temporal, else at once. A failure is logged, not returned: the deliveries
// are stored, and the worker's sweeper starts what was not started.
func (s *Server) startDeliveries(ctx context.Context, ds []store.Delivery) {
	if s.StartQueue != nil {
		s.StartQueue.Enqueue(ctx, s.withTraceParent(ctx, ds))
		return
	}
	s.startNow(ctx, ds)
}

// startNow starts the workflows of stored deliveries before answering (a
// retry, a redrive, a redeliver). A failure is logged, not returned: the
// sweeper starts what was not started.
func (s *Server) startNow(ctx context.Context, ds []store.Delivery) {
	if err := s.Starter.Start(ctx, ds); err != nil {
		s.Logger.ErrorContext(ctx, "start_deliveries_failed", "count", len(ds), "error", err)
	}
}

// getBacklog answers how far behind the account's deliveries are: how many
// still wait for the outcome of their first attempt, how many of those have
// no workflow yet, and the age of the oldest (the lag).
func (s *Server) getBacklog(c echo.Context) error {
	b, err := s.Store.Backlog(c.Request().Context(), account(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, b)
}
