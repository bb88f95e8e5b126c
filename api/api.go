// Package api is hookrelay's HTTP API, built on Echo: subscriptions, event
// publishing, deliveries, dead letters and policies under /v1, plus health
// checks. One error handler turns every error into the same JSON shape;
// api/openapi.json describes /v1 and is served at /v1/openapi.json.
package api

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"go.temporal.io/sdk/client"

	"github.com/hookrelay/hookrelay/azstorage"
	"github.com/hookrelay/hookrelay/console"
	"github.com/hookrelay/hookrelay/egress"
	"github.com/hookrelay/hookrelay/metrics"
	"github.com/hookrelay/hookrelay/starter"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/tracing"
)

// MaxBodyBytes bounds a request body. Event bodies live in PostgreSQL, not in
// workflow payloads, so this is a product limit, not Temporal's 2 MB one.
const MaxBodyBytes = 1 << 20

// Server holds the API's dependencies.
type Server struct {
	Store    *store.Store
	Temporal client.Client
	Starter  *starter.Starter
	// StartQueue, when set, starts published deliveries in the background
	// (starter.Queue); nil starts them before answering.
	StartQueue *starter.Queue
	Logger     *slog.Logger
	// Auth says who may call; its zero value needs credentials everywhere.
	Auth Auth
	// Metrics are served at /metrics and count publications; nil serves
	// none.
	Metrics *metrics.Metrics
	// Egress refuses subscriptions to denied addresses; nil denies every
	// private and special-purpose network.
	Egress *egress.Guard
	// Console are the web console's settings (console/, under /console).
	Console console.Settings
	console *console.Console
	// Tracing makes requests spans and passes their trace context on to
	// the deliveries they start (docs/tracing.md); nil traces nothing.
	Tracing *tracing.Tracing
	// Storage are the Azure storage accounts hookrelay has credentials
	// for: an Event Grid subscription whose dead letters go to another is
	// refused; nil has none.
	Storage *azstorage.Accounts
	// PublishesPerType bounds the events of one type one account has
	// being stored at once; zero means DefaultPublishesPerType.
	PublishesPerType int
	lanes            *lanes
}

// New returns the Echo instance serving the API.
func New(s *Server) *echo.Echo {
	if s.Egress == nil {
		s.Egress = egress.New(nil)
	}
	s.lanes = newLanes(s.PublishesPerType)
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.handleError
	if s.Tracing != nil {
		e.Use(s.traceRequests)
	}
	e.Use(middleware.BodyLimit("1M"))
	e.Use(checkParams)
	e.Use(s.authenticate)
	s.registerMetrics(e)
	e.GET("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)
	e.GET(openAPIPath, s.getOpenAPI)
	v1 := e.Group("/v1", s.requireAccount)
	v1.POST("/subscriptions", s.createSubscription)
	v1.GET("/subscriptions", s.listSubscriptions)
	v1.GET("/subscriptions/:id", s.getSubscription)
	v1.PATCH("/subscriptions/:id", s.patchSubscription)
	v1.DELETE("/subscriptions/:id", s.deleteSubscription)
	v1.POST("/subscriptions/:id/reveal-secret", s.revealSecret)
	v1.POST("/subscriptions/:id/secret/rotate", s.rotateSecret)
	v1.POST("/events", s.publish)
	v1.GET("/events/:id", s.getEvent)
	v1.GET("/backlog", s.getBacklog)
	v1.GET("/deliveries", s.listDeliveries)
	v1.GET("/deliveries/:id", s.getDelivery)
	v1.POST("/deliveries/:id/retry", s.retryDelivery)
	v1.GET("/dead-letters", s.listDeadLetters)
	v1.GET("/dead-letters/:id", s.getDeadLetter)
	v1.POST("/dead-letters/:id/redrive", s.redrive)
	s.registerRecovery(v1)
	s.registerOrdering(v1)
	v1.GET("/policies", s.listPolicies)
	v1.GET("/policies/:name", s.getPolicy)
	s.registerEndpoints(v1)
	s.registerKeys(e)
	s.registerSAP(e)
	s.routesEventGrid(e)
	s.registerConsole(e, v1)
	return e
}

func (s *Server) healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

// readyz answers 200 only when PostgreSQL and Temporal both answer. A failed
// check reads "unavailable"; its error (addresses and all) goes to the log,
// not to the unauthenticated caller.
func (s *Server) readyz(c echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), 3*time.Second)
	defer cancel()
	checks := map[string]string{"postgres": "ok", "temporal": "ok"}
	status := http.StatusOK
	fail := func(check string, err error) {
		s.Logger.WarnContext(ctx, "readiness_check_failed", "check", check, "error", err)
		checks[check], status = "unavailable", http.StatusServiceUnavailable
	}
	if err := s.Store.Ping(ctx); err != nil {
		fail("postgres", err)
	}
	if _, err := s.Temporal.CheckHealth(ctx, &client.CheckHealthRequest{}); err != nil {
		fail("temporal", err)
	}
	return c.JSON(status, map[string]any{"ready": status == http.StatusOK, "checks": checks})
}
