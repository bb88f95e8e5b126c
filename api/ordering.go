package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"
	"go.temporal.io/api/serviceerror"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
)

// SkipReason is the final reason, and the dead letter's, of a delivery an
// operator skipped.
const SkipReason = "Skipped by an operator"

// registerOrdering adds what ordered delivery shows and does
// (docs/ordering.md): a subscription's sequences and the skip of a delivery.
func (s *Server) registerOrdering(g *echo.Group) {
	g.GET("/subscriptions/:id/sequences", s.listSequences)
	g.POST("/deliveries/:id/skip", s.skipDelivery)
}

// SequencesResponse is the answer to GET /v1/subscriptions/{id}/sequences.
type SequencesResponse struct {
	SubscriptionID string           `json:"subscription_id"`
	Ordered        bool             `json:"ordered"`
	Sequences      []store.Sequence `json:"sequences"`
}

// listSequences shows, for each ordering key of a subscription with
// deliveries under way, the delivery the others wait behind and how many
// wait: the oldest first, at most limit (1-1000, default 100).
func (s *Server) listSequences(c echo.Context) error {
	ctx := c.Request().Context()
	sub, err := s.Store.GetSubscription(ctx, account(c), c.Param("id"))
	if err != nil {
		return err
	}
	limit, err := limitParam(c)
	if err != nil {
		return err
	}
	seqs, err := s.Store.Sequences(ctx, sub.ID, limit)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, SequencesResponse{SubscriptionID: sub.ID, Ordered: sub.Ordered, Sequences: seqs})
}

// limitParam reads the query's limit: 1-1000, 100 when absent.
func limitParam(c echo.Context) (int, error) {
	v := c.QueryParam("limit")
	if v == "" {
		return 100, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 1000 {
		return 0, invalid("limit", "limit must be a whole number from 1 to 1000, got %q", v)
	}
	return n, nil
}

// skipDelivery ends a delivery still under way as dead-lettered, with
// SkipReason: its workflow, if it has one, is terminated first, so no
// attempt starts after the answer. In an ordered sequence, the deliveries
// waiting behind it go on. One that ended already is a 409.
func (s *Server) skipDelivery(c echo.Context) error {
	ctx := c.Request().Context()
	d, err := s.Store.GetDelivery(ctx, account(c), c.Param("id"))
	if err != nil {
		return err
	}
	if d.Status.IsFinal() {
		return fmt.Errorf("delivery %s already ended %s: %w", d.ID, d.Status, store.ErrConflict)
	}
	if err := s.terminate(ctx, d.WorkflowID); err != nil {
		return err
	}
	f := store.Finish{DeliveryID: d.ID, Status: policies.StatusDeadLettered, Reason: SkipReason}
	if as, err := s.Store.Attempts(ctx, d.ID); err == nil && len(as) > 0 {
		f.LastStatus, f.LastError = as[len(as)-1].StatusCode, as[len(as)-1].ErrorMessage
	}
	done, err := s.Store.FinishDelivery(ctx, f)
	if err != nil {
		return err
	}
	if done.Delivery == nil {
		return fmt.Errorf("delivery %s ended before it was skipped: %w", d.ID, store.ErrConflict)
	}
	s.startNow(ctx, done.Raised.Deliveries)
	return c.JSON(http.StatusOK, done.Delivery)
}

// terminate terminates a delivery's workflow; one that does not exist or
// has ended is no error.
func (s *Server) terminate(ctx context.Context, workflowID string) error {
	err := s.Temporal.TerminateWorkflow(ctx, workflowID, "", SkipReason)
	var missing *serviceerror.NotFound
	if err != nil && !errors.As(err, &missing) {
		return fmt.Errorf("api: terminate %s: %w", workflowID, err)
	}
	return nil
}
