package store

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// ListFilter narrows a list of dead letters or deliveries. Empty fields match
// everything. After is the cursor: the id of the last row of the previous
// page; Limit bounds the page.
type ListFilter struct {
	SubscriptionID string
	EndpointID     string
	Status         string
	Since, Until   time.Time
	After          string
	Limit          int
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
	if f.SubscriptionID != "" {
		add("subscription_id = $%d", f.SubscriptionID)
	}
	if f.EndpointID != "" {
		add("endpoint_id = $%d", f.EndpointID)
	}
	if f.Status != "" {
		add("status = $%d", f.Status)
	}
	if !f.Since.IsZero() {
		add("created_at >= $%d", f.Since)
	}
	if !f.Until.IsZero() {
		add("created_at < $%d", f.Until)
	}
	if f.After != "" {
		args = append(args, f.After)
		conds = append(conds, fmt.Sprintf("(%[1]s.created_at, %[1]s.id) > (SELECT created_at, id FROM %[2]s WHERE id = $%[3]d)",
			alias, table, len(args)))
	}
	return strings.Join(conds, " AND "), append(args, f.Limit)
}

// ListDeliveries returns the account's deliveries matching f, oldest first.
func (s *Store) ListDeliveries(ctx context.Context, account string, f ListFilter) ([]Delivery, error) {
	where, args := f.where("d", "deliveries", account)
	q := `SELECT ` + prefixed("d", deliveryCols) + ` FROM deliveries d WHERE ` + where +
		fmt.Sprintf(` ORDER BY d.created_at, d.id LIMIT $%d`, len(args))
	out := []Delivery{}
	if err := s.db.SelectContext(ctx, &out, q, args...); err != nil {
		return nil, fmt.Errorf("store: list deliveries: %w", err)
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
