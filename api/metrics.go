package api

import (
	"net/http/pprof"

	"github.com/labstack/echo-contrib/echoprometheus"
	"github.com/labstack/echo/v4"
)

// registerMetrics counts every request with Echo's Prometheus middleware
// (by route, method and status: bounded labels) and serves the registry at
// /metrics, to the admin key or the metrics token.
func (s *Server) registerMetrics(e *echo.Echo) {
	if s.Metrics == nil {
		return
	}
	mw, err := echoprometheus.MiddlewareConfig{
		Namespace: "hookrelay", Subsystem: "http", Registerer: s.Metrics.Registry,
		DoNotUseRequestPathFor404: true,
		Skipper: func(c echo.Context) bool {
			return c.Path() == "/metrics" || c.Path() == "/debug/pprof/*"
		},
	}.ToMiddleware()
	if err == nil {
		e.Use(mw)
	} else { // a second API on the same registry: its requests are counted once
		s.Logger.Warn("http_metrics_not_registered", "error", err)
	}
	e.GET("/metrics", echo.WrapHandler(s.Metrics.Handler()), s.requireMetrics)
	e.GET("/debug/pprof/*", servePprof, s.requireMetrics)
}

// servePprof serves Go's runtime profiles (net/http/pprof), to the same
// callers as /metrics: /debug/pprof/ lists them, /debug/pprof/profile takes
// a CPU profile (?seconds=N), /debug/pprof/heap and the others a snapshot.
func servePprof(c echo.Context) error {
	switch c.Param("*") {
	case "profile":
		pprof.Profile(c.Response(), c.Request())
	case "trace":
		pprof.Trace(c.Response(), c.Request())
	case "symbol":
		pprof.Symbol(c.Response(), c.Request())
	case "cmdline":
		pprof.Cmdline(c.Response(), c.Request())
	default:
		pprof.Index(c.Response(), c.Request())
	}
	return nil
}

// requireMetrics lets through the admin key and the metrics token.
func (s *Server) requireMetrics(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		admin, _ := c.Get(ctxAdmin).(bool)
		reader, _ := c.Get(ctxMetrics).(bool)
		if !admin && !reader {
			return forbidden("%s needs the metrics token (HOOKRELAY_METRICS_TOKEN) or the admin key", c.Path())
		}
		return next(c)
	}
}
