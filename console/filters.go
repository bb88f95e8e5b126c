package console

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
)

// pageSize is how many rows a list page shows.
const pageSize = 50

// filters are a list page's query: what the form shows back, and the
// store filter it makes.
type filters struct {
	Status, Policy, Endpoint, Subscription, EventType, ID string
	Since, Until                                          string
	Cursor                                                string
	// Problem says what is wrong with the query; the list is then empty.
	Problem string
	f       store.ListFilter
}

// readFilters reads a list's query; cursorPrefix is the prefix of the ids
// its cursor names (store.IsID, as the API checks its cursors).
func readFilters(c echo.Context, cursorPrefix string) filters {
	q := c.QueryParam
	fs := filters{Status: q("status"), Policy: q("policy"), Endpoint: q("endpoint"), Subscription: q("subscription"),
		EventType: strings.TrimSpace(q("event_type")), ID: strings.TrimSpace(q("id")),
		Since: q("since"), Until: q("until"), Cursor: q("cursor")}
	fs.f = store.ListFilter{Status: fs.Status, Policy: fs.Policy, EndpointID: fs.Endpoint,
		SubscriptionID: fs.Subscription, After: fs.Cursor, Limit: pageSize, Newest: true}
	if fs.EventType != "" {
		fs.f.EventTypes = []string{fs.EventType}
	}
	var err error
	if fs.f.Since, err = formTime(fs.Since); err != nil {
		fs.Problem = "since: " + err.Error()
	}
	if fs.f.Until, err = formTime(fs.Until); err != nil {
		fs.Problem = "until: " + err.Error()
	}
	switch {
	case fs.Status != "" && !policies.IsStatus(fs.Status):
		fs.Problem = fmt.Sprintf("status: %q is not a delivery status", fs.Status)
	case fs.Policy != "" && !slices.Contains(policies.Names(), fs.Policy):
		fs.Problem = fmt.Sprintf("policy: %q is not a policy", fs.Policy)
	case fs.Cursor != "" && !store.IsID(cursorPrefix, fs.Cursor):
		fs.Problem = "cursor: not a page of this list"
	case len(fs.EventType) > 200:
		fs.Problem = "event type: at most 200 characters"
	}
	return fs
}

// Form times are UTC: an <input type="datetime-local"> value, or RFC 3339.
var timeLayouts = []string{"2006-01-02T15:04", "2006-01-02T15:04:05", time.RFC3339}

// formTime reads a form's time ("" is the zero time).
func formTime(v string) (time.Time, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return time.Time{}, nil
	}
	for _, l := range timeLayouts {
		if t, err := time.ParseInLocation(l, v, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a time (YYYY-MM-DDTHH:MM, UTC)", v)
}

// rfc3339 is a form's time as the API takes it ("" stays "").
func rfc3339(v string) (string, error) {
	t, err := formTime(v)
	if err != nil || t.IsZero() {
		return "", err
	}
	return t.Format(time.RFC3339), nil
}

// next is the query of the page after one of n rows ending at lastID ("" when
// the page is not full: no more).
func (fs filters) next(n int, lastID string) string {
	if n < pageSize {
		return ""
	}
	vals := url.Values{}
	for k, v := range map[string]string{"status": fs.Status, "policy": fs.Policy, "endpoint": fs.Endpoint,
		"subscription": fs.Subscription, "event_type": fs.EventType, "since": fs.Since, "until": fs.Until,
		"cursor": lastID} {
		if v != "" {
			vals.Set(k, v)
		}
	}
	return "?" + vals.Encode()
}
