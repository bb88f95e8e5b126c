package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/hookrelay/hookrelay/store"
)

// Bounds of an endpoint's limits (migration 00013 checks them again).
const (
	maxConcurrencyLimit = 1000
	maxRateLimit        = 100000
	maxRatePeriod       = 86400
)

// limitsRequest is PUT /v1/endpoints/{id}/limits: null or absent removes a
// limit; the period defaults to one second.
type limitsRequest struct {
	MaxConcurrency         *int `json:"max_concurrency"`
	RateLimit              *int `json:"rate_limit"`
	RateLimitPeriodSeconds *int `json:"rate_limit_period_seconds"`
}

func (r limitsRequest) limits() (store.Limits, error) {
	l := store.Limits{MaxConcurrency: r.MaxConcurrency, RateLimit: r.RateLimit, RateLimitPeriodSeconds: 1}
	if r.RateLimitPeriodSeconds != nil {
		l.RateLimitPeriodSeconds = *r.RateLimitPeriodSeconds
	}
	switch {
	case outside(l.MaxConcurrency, maxConcurrencyLimit):
		return l, invalid("max_concurrency", "must be null or an integer from 1 to %d", maxConcurrencyLimit)
	case outside(l.RateLimit, maxRateLimit):
		return l, invalid("rate_limit", "must be null or an integer from 1 to %d", maxRateLimit)
	case outside(&l.RateLimitPeriodSeconds, maxRatePeriod):
		return l, invalid("rate_limit_period_seconds", "must be an integer from 1 to %d", maxRatePeriod)
	}
	return l, nil
}

// outside reports whether a set n is outside 1..most.
func outside(n *int, most int) bool { return n != nil && (*n < 1 || *n > most) }

// setEndpointLimits sets the endpoint's concurrency cap and rate limit, which
// every worker honours from its next attempt on: an attempt that finds no
// room waits, without counting as an attempt or a failure.
func (s *Server) setEndpointLimits(c echo.Context) error {
	var r limitsRequest
	if err := decode(c, &r); err != nil {
		return err
	}
	l, err := r.limits()
	if err != nil {
		return err
	}
	e, err := s.Store.SetLimits(c.Request().Context(), account(c), c.Param("id"), l)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"endpoint_id": e.ID, "limits": e.Limits})
}
