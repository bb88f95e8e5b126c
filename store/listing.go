package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/lib/pq"
)

// ListFilter narrows a list of dead letters, deliveries or events. Empty
// fields match everything. Type matches a table's type column (events).
// Since and Until bound created_at, or finished_at when Ended is set (when a
// delivery ended). After is the cursor: the id of the last row of the
// previous page; Limit bounds the page.
type ListFilter struct {
	SubscriptionID string
	EndpointID     string
	Status         string
	Type           string
	Since, Until   time.Time
	Ended          bool
	After          string
	Limit          int
	// EndpointIDs, when not empty, keeps the rows of these endpoints only
	// (a portal's scope).
	EndpointIDs []string
	// EventTypes and Policy narrow deliveries (ListDeliveries only):
	// EventTypes, when not empty, to these event types.
	EventTypes []string
	Policy     string
	// Newest lists newest first, After then being the last row of a page of
	// newer rows.
	Newest bool
}

// where is f as SQL conditions on table (aliased alias) of the account, and
// its arguments, the page's limit last.
func (f ListFilter) where(alias, table, account string) (string, []any) {
	conds := []string{alias + ".account_id = $1"}
	args := []any{account}
	add := func(cond string, v any) {
		args = append(args, v)
		conds = append(conds, fmt.Sprintf(alias+"."+cond, len(args)))
	}
	at := "created_at"
	if f.Ended {
		at = "finished_at"
	}
	for _, c := range []struct {
		cond string
		v    any
		on   bool
	}{
		{"subscription_id = $%d", f.SubscriptionID, f.SubscriptionID != ""},
		{"endpoint_id = $%d", f.EndpointID, f.EndpointID != ""},
		{"endpoint_id = ANY($%d)", pq.Array(f.EndpointIDs), len(f.EndpointIDs) > 0},
		{"event_type = ANY($%d)", pq.Array(f.EventTypes), len(f.EventTypes) > 0},
		{"policy = $%d", f.Policy, f.Policy != ""},
		{"status = $%d", f.Status, f.Status != ""},
		{"type = $%d", f.Type, f.Type != ""},
		{at + " >= $%d", f.Since, !f.Since.IsZero()},
		{at + " < $%d", f.Until, !f.Until.IsZero()},
	} {
		if c.on {
			add(c.cond, c.v)
		}
	}
	if f.After != "" {
		args = append(args, f.After)
		conds = append(conds, f.after(alias, table, len(args)))
	}
	return strings.Join(conds, " AND "), append(args, f.Limit)
}

// after is the cursor's condition: rows after (or, newest first, before)
// the row whose id is argument n.
func (f ListFilter) after(alias, table string, n int) string {
	cmp := ">"
	if f.Newest {
		cmp = "<"
	}
	return fmt.Sprintf("(%[1]s.created_at, %[1]s.id) %[4]s (SELECT created_at, id FROM %[2]s WHERE id = $%[3]d)",
		alias, table, n, cmp)
}

// order is the ORDER BY of a list of table alias: oldest first, or newest
// first when f.Newest.
func (f ListFilter) order(alias string) string {
	dir := ""
	if f.Newest {
		dir = " DESC"
	}
	return fmt.Sprintf(" ORDER BY %[1]s.created_at%[2]s, %[1]s.id%[2]s", alias, dir)
}

// ListDeliveries returns the account's deliveries matching f, oldest first
// unless f.Newest (its Type is not used: EventTypes is).
func (s *Store) ListDeliveries(ctx context.Context, account string, f ListFilter) ([]Delivery, error) {
	f.Type = ""
	where, args := f.where("d", "deliveries", account)
	q := `SELECT ` + prefixed("d", deliveryCols) + ` FROM deliveries d WHERE ` + where +
		f.order("d") + fmt.Sprintf(` LIMIT $%d`, len(args))
	out := []Delivery{}
	if err := s.db.SelectContext(ctx, &out, q, args...); err != nil {
		return nil, fmt.Errorf("store: list deliveries: %w", err)
	}
	return out, nil
}

// EventSummary is an event as a list shows it: without its data (read one
// event for its data and deliveries).
type EventSummary struct {
	ID         string    `db:"id" json:"-"`
	ExternalID string    `db:"external_id" json:"id"`
	Type       string    `db:"type" json:"type"`
	Subject    string    `db:"subject" json:"subject,omitempty"`
	OccurredAt time.Time `db:"occurred_at" json:"time"`
	CreatedAt  time.Time `db:"created_at" json:"created_at"`
}

// ListEvents returns the account's events matching f (type, since, until on
// their creation), oldest first unless f.Newest.
func (s *Store) ListEvents(ctx context.Context, account string, f ListFilter) ([]EventSummary, error) {
	f.SubscriptionID, f.EndpointID, f.Status, f.Ended = "", "", "", false
	f.EndpointIDs, f.EventTypes, f.Policy = nil, nil, ""
	where, args := f.where("e", "events", account)
	q := `SELECT e.id, e.external_id, e.type, e.subject, e.occurred_at, e.created_at FROM events e WHERE ` +
		where + f.order("e") + fmt.Sprintf(` LIMIT $%d`, len(args))
	out := []EventSummary{}
	if err := s.db.SelectContext(ctx, &out, q, args...); err != nil {
		return nil, fmt.Errorf("store: list events: %w", err)
	}
	return out, nil
}

// prefixed qualifies each column of cols with alias.
func prefixed(alias, cols string) string {
	fields := strings.Split(cols, ",")
	for i, c := range fields {
		fields[i] = alias + "." + strings.TrimSpace(c)
	}
	return strings.Join(fields, ", ")
}
