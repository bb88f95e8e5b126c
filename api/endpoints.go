package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/hookrelay/hookrelay/health"
	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/workflows"
)

// registerEndpoints adds the endpoint health routes (docs/policies.md#workfront
// circuit breaker): the state, counters and history of an endpoint, and the
// operator's unfreeze, disable and enable.
func (s *Server) registerEndpoints(g *echo.Group) {
	g.GET("/endpoints/:id", s.getEndpoint)
	g.PUT("/endpoints/:id/health", s.setEndpointHealth)
	g.PUT("/endpoints/:id/limits", s.setEndpointLimits)
	for _, name := range []string{workflows.SignalUnfreeze, workflows.SignalDisable, workflows.SignalEnable} {
		g.POST("/endpoints/:id/"+name, s.endpointSignal(name))
	}
}

// endpointView is GET /v1/endpoints/{id}: the endpoint, its window's counts
// and its last state changes.
type endpointView struct {
	store.Endpoint
	// Rules are the circuit-breaker rules in force (its "health" holds only
	// the endpoint's own overrides).
	Rules   policies.HealthDoc  `json:"rules"`
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
	svc := s.endpoints()
	snap, err := svc.Snapshot(ctx, e.ID)
	if err != nil {
		return err
	}
	changes, err := s.Store.StateChanges(ctx, e.ID, 100)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, endpointView{Endpoint: e, Changes: changes, Rules: snap.Health.Doc(), Window: windowView{
		Seconds:  snap.Health.Window.Seconds(),
		Attempts: snap.Snapshot.WindowAttempts, Failures: snap.Snapshot.WindowFailures,
	}})
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
		if name == workflows.SignalUnfreeze && e.State != policies.StateFrozen {
			return &Error{Status: http.StatusConflict, Code: "conflict", Message: "endpoint " + e.ID + " is " + e.State + ", not frozen"}
		}
		var sig workflows.OperatorSignal
		if c.Request().ContentLength != 0 {
			if err := decode(c, &sig); err != nil {
				return err
			}
		}
		if err := s.signalEndpoint(ctx, e.ID, name, sig); err != nil {
			return err
		}
		return c.JSON(http.StatusAccepted, map[string]string{
			"endpoint_id": e.ID, "signal": name, "workflow_id": workflows.EndpointWorkflowID(e.ID), "state": e.State,
		})
	}
}

func (s *Server) signalEndpoint(ctx context.Context, endpointID, name string, arg any) error {
	svc := s.endpoints()
	rules, err := svc.Rules(ctx, endpointID)
	if err != nil {
		return err
	}
	return svc.Signal(ctx, endpointID, name, arg, rules)
}

// queues are the task queues the API starts workflows on.
func (s *Server) queues() workflows.Queues {
	if s.Starter == nil {
		return workflows.DefaultQueues()
	}
	return s.Starter.Queues.OrDefault()
}

// endpoints is the endpoint health service the API shares with the activities.
func (s *Server) endpoints() *health.Service {
	return &health.Service{Store: s.Store, Temporal: s.Temporal, Queues: s.queues()}
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
	if err := s.signalEndpoint(ctx, e.ID, workflows.SignalEvaluate, workflows.HealthSignal{}); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"endpoint_id": e.ID, "health": o})
}
