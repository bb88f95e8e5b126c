package api

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/where"
)

// Pagination of the pull query, as SAP Open Connectors' platform APIs do it:
// pageSize and nextPage query parameters, the next page's token in the
// Elements-Next-Page-Token response header.
const (
	HeaderNextPage  = "Elements-Next-Page-Token"
	DefaultPageSize = 200
	MaxPageSize     = 1000
)

// registerSAP adds the SAP Open Connectors mode (docs/policies.md#sap): account
// authentication for every route, the accounts routes, and the pull queue.
func (s *Server) registerSAP(e *echo.Echo) {
	e.POST("/accounts", s.createAccount, s.requireAdmin)
	e.GET("/accounts/:id", s.getAccount, s.requireSAP)
	e.PATCH("/accounts/:id/settings", s.setAccountSettings, s.requireSAP)
	e.POST("/accounts/:id/settings", s.setAccountSettings, s.requireSAP)
	e.GET("/notifications/subscriptions/deliveries", s.pullQueue, s.requireSAP)
	e.PUT("/notifications/subscriptions/deliveries", s.redeliverQueue, s.requireSAP)
	// The same under /v1, where open mode acts as the default account.
	e.GET("/v1/notifications/subscriptions/deliveries", s.pullQueue, s.requireAccount)
	e.PUT("/v1/notifications/subscriptions/deliveries", s.redeliverQueue, s.requireAccount)
}

// SAPDelivery is a delivery as the pull query returns it; its fields are the
// ones the where clause names (config.url, subscription.id, event.type...).
type SAPDelivery struct {
	ID           string          `json:"id"`
	Status       policies.Status `json:"status"`
	Channel      string          `json:"channel"`
	Config       SAPConfig       `json:"config"`
	Subscription SAPRef          `json:"subscription"`
	Attempts     int             `json:"attempts"`
	CreatedDate  time.Time       `json:"createdDate"`
	Event        SAPEvent        `json:"event"`
}

// SAPConfig is a delivery's channel configuration: the webhook URL.
type SAPConfig struct {
	URL string `json:"url"`
}

// SAPRef names another object by id.
type SAPRef struct {
	ID string `json:"id"`
}

// SAPEvent is the event a delivery carries: its id, type, data and time.
type SAPEvent struct {
	ID   string        `json:"id"`
	Type string        `json:"type"`
	Data store.RawJSON `json:"data"`
	Time time.Time     `json:"time"`
}

func sapDelivery(d store.QueuedDelivery) SAPDelivery {
	return SAPDelivery{
		ID: d.ID, Status: d.Status, Channel: "webhook", Config: SAPConfig{URL: d.URL},
		Subscription: SAPRef{ID: d.SubscriptionID}, Attempts: d.Attempts, CreatedDate: d.CreatedAt,
		Event: SAPEvent{ID: d.EventID, Type: d.EventType, Data: d.EventData, Time: d.EventTime},
	}
}

// parseWhere parses and compiles the where query parameter; every error is
// a 400 naming the field "where" and, for syntax errors, the character.
func parseWhere(c echo.Context) (where.Expr, error) {
	raw := c.QueryParam("where")
	if strings.TrimSpace(raw) == "" {
		return where.Expr{}, invalid("where", "where is required, e.g. where=channel='webhook' and status='queued'")
	}
	w, err := where.Parse(raw)
	if err != nil {
		return where.Expr{}, invalid("where", "%s", err.Error())
	}
	if _, _, err := w.SQL(store.QueueColumns, 2); err != nil {
		return where.Expr{}, invalid("where", "%s", err.Error())
	}
	return w, nil
}

func pageSize(c echo.Context) (int, error) {
	v := c.QueryParam("pageSize")
	if v == "" {
		return DefaultPageSize, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > MaxPageSize {
		return 0, invalid("pageSize", "pageSize must be a whole number from 1 to %d, got %q", MaxPageSize, v)
	}
	return n, nil
}

// pullQueue answers GET /notifications/subscriptions/deliveries?where=...:
// the account's matching deliveries with their events, oldest first.
func (s *Server) pullQueue(c echo.Context) error {
	w, err := parseWhere(c)
	if err != nil {
		return err
	}
	limit, err := pageSize(c)
	if err != nil {
		return err
	}
	cur, err := decodeCursor(c.QueryParam("nextPage"))
	if err != nil {
		return err
	}
	ds, err := s.Store.ListQueue(c.Request().Context(), account(c), w, cur, limit+1)
	if err != nil {
		return err
	}
	if len(ds) > limit {
		ds = ds[:limit]
		c.Response().Header().Set(HeaderNextPage, encodeCursor(ds[limit-1]))
	}
	out := make([]SAPDelivery, 0, len(ds))
	for _, d := range ds {
		out = append(out, sapDelivery(d))
	}
	return c.JSON(http.StatusOK, out)
}

// RedeliverResponse is the answer to PUT /notifications/subscriptions/deliveries.
type RedeliverResponse struct {
	// Redelivered is how many queued deliveries were delivered again.
	Redelivered int `json:"redelivered"`
	// Deliveries are the ids of the fresh deliveries.
	Deliveries []string `json:"deliveries"`
	// ReactivatedSubscriptions are the ids of the subscriptions made active.
	ReactivatedSubscriptions []string `json:"reactivatedSubscriptions"`
}

// redeliverQueue answers PUT /notifications/subscriptions/deliveries?where=...:
// it reactivates the matching subscriptions and delivers their queued events
// again. The database part is one transaction; fresh deliveries this fails to
// start are started by the worker's sweeper.
func (s *Server) redeliverQueue(c echo.Context) error {
	w, err := parseWhere(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	res, err := s.Store.Redeliver(ctx, account(c), w)
	if err != nil {
		return err
	}
	s.startNow(ctx, res.Deliveries)
	out := RedeliverResponse{Redelivered: len(res.Deliveries), Deliveries: make([]string, 0, len(res.Deliveries)),
		ReactivatedSubscriptions: res.Subscriptions}
	for _, d := range res.Deliveries {
		out.Deliveries = append(out.Deliveries, d.ID)
	}
	return c.JSON(http.StatusOK, out)
}
