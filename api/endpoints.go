package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/hookrelay/hookrelay/activities"
	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/starter"
	"github.com/hookrelay/hookrelay/store"
)

// registerEndpoints adds the endpoint health routes (POLICIES.md §workfront
// circuit breaker): the state, counters and history of an endpoint, and the
// operator's unfreeze, disable and enable.
func (s *Server) registerEndpoints(g *echo.Group) {
	g.GET("/endpoints/:id", s.getEndpoint)
	g.PUT("/endpoints/:id/health", s.setEndpointHealth)
	for _, name := range []string{activities.SignalUnfreeze, activities.SignalDisable, activities.SignalEnable} {
		g.POST("/endpoints/:id/"+name, s.endpointSignal(name))
	}
}

// endpointView is GET /v1/endpoints/{id}: the endpoint, its window's counts
// and its last state changes.
type endpointView struct {
	store.Endpoint
	Window  windowView          `json:"window"`
	Changes []store.StateChange `json:"changes"`
}

type windowView struct {
	Seconds  float64 `json:"seconds"`
	Attempts int64   `json:"attempts"`
	Failures int64   `json:"failures"`
}

func (s *Server) getEndpoint(c echo.Context) error {
	ctx := c.Request().Context()
	e, err := s.Store.GetEndpoint(ctx, account(c), c.Param("id"))
	if err != nil {
		return err
	}
	h := activities.Activities{Store: s.Store}
	snap, err := h.EndpointSnapshot(ctx, activities.SnapshotInput{EndpointID: e.ID, Health: s.endpointPolicyHealth(ctx, e.ID)})
	if err != nil {
		return err
	}
	changes, err := s.Store.StateChanges(ctx, e.ID, 100)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, endpointView{Endpoint: e, Changes: changes, Window: windowView{
		Seconds:  snap.Health.Window.Seconds(),
		Attempts: snap.Snapshot.WindowAttempts, Failures: snap.Snapshot.WindowFailures,
	}})
}

// endpointPolicyHealth is the circuit breaker of the endpoint's oldest
// subscription's policy, or the default one.
func (s *Server) endpointPolicyHealth(ctx context.Context, endpointID string) policies.Health {
	sub, err := s.Store.EndpointSubscription(ctx, endpointID)
	if err != nil {
		return policies.WorkfrontHealth
	}
	p, err := starter.PolicyOf(sub)
	if err != nil {
		return policies.WorkfrontHealth
	}
	return p.Health
}

// endpointSignal sends an operator's signal to the endpoint's workflow,
// starting it if needed. Unfreeze answers 409 unless the endpoint is frozen.
func (s *Server) endpointSignal(name string) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		e, err := s.Store.GetEndpoint(ctx, account(c), c.Param("id"))
		if err != nil {
			return err
		}
		if name == activities.SignalUnfreeze && e.State != policies.StateFrozen {
			return &Error{Status: http.StatusConflict, Code: "conflict", Message: "endpoint " + e.ID + " is " + e.State + ", not frozen"}
		}
		var sig activities.OperatorSignal
		if c.Request().ContentLength != 0 {
			if err := decode(c, &sig); err != nil {
				return err
			}
		}
		if err := s.signalEndpoint(ctx, e.ID, name, sig); err != nil {
			return err
		}
		return c.JSON(http.StatusAccepted, map[string]string{
			"endpoint_id": e.ID, "signal": name, "workflow_id": activities.EndpointWorkflowID(e.ID), "state": e.State,
		})
	}
}

func (s *Server) signalEndpoint(ctx context.Context, endpointID, name string, arg any) error {
	start := activities.EndpointInput{EndpointID: endpointID, Health: s.endpointPolicyHealth(ctx, endpointID)}
	_, err := s.Temporal.SignalWithStartWorkflow(ctx, activities.EndpointWorkflowID(endpointID), name, arg,
		activities.EndpointOptions(endpointID), activities.EndpointWorkflowType, start)
	return err
}

// setEndpointHealth stores the endpoint's own thresholds (a health object as
// in retry_policy.health) and has its workflow evaluate them.
func (s *Server) setEndpointHealth(c echo.Context) error {
	ctx := c.Request().Context()
	e, err := s.Store.GetEndpoint(ctx, account(c), c.Param("id"))
	if err != nil {
		return err
	}
	var o policies.HealthOverrides
	if err := decode(c, &o); err != nil {
		return err
	}
	if _, err := o.Apply(policies.WorkfrontHealth, ""); err != nil {
		var fe *policies.FieldError
		if errors.As(err, &fe) {
			return invalid(fe.Field, "%s", fe.Message)
		}
		return err
	}
	raw, _ := json.Marshal(o)
	if err := s.Store.SetEndpointHealth(ctx, account(c), e.ID, raw); err != nil {
		return err
	}
	if err := s.signalEndpoint(ctx, e.ID, activities.SignalEvaluate, activities.HealthSignal{}); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"endpoint_id": e.ID, "health": o})
}
