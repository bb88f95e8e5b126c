package policies

import "strings"

// Status is a delivery's status: in flight (pending, retrying, waiting) or
// final (delivered, dead-lettered, dropped, queued, or redelivered: a queued
// delivery handed on to a fresh one).
type Status string

// Delivery statuses.
const (
	StatusPending      Status = "pending"
	StatusRetrying     Status = "retrying"
	StatusWaiting      Status = "waiting"
	StatusDelivered    Status = "delivered"
	StatusDeadLettered Status = "dead_lettered"
	StatusDropped      Status = "dropped"
	StatusQueued       Status = "queued"
	StatusRedelivered  Status = "redelivered"
)

// InFlightStatuses are the statuses of a delivery still under way.
var InFlightStatuses = []Status{StatusPending, StatusRetrying, StatusWaiting}

// FinalStatuses are the statuses that end a delivery.
var FinalStatuses = []Status{StatusDelivered, StatusDeadLettered, StatusDropped, StatusQueued, StatusRedelivered}

// EndedStatuses are the final statuses after which nothing more happens to a
// delivery: all but queued, since a queued delivery still waits to be pulled
// or redelivered (docs/policies.md#sap). Retention deletes only these
// (store.Prune).
var EndedStatuses = []Status{StatusDelivered, StatusDeadLettered, StatusDropped, StatusRedelivered}

// IsFinal reports whether s ends a delivery.
func (s Status) IsFinal() bool {
	for _, f := range FinalStatuses {
		if s == f {
			return true
		}
	}
	return false
}

// SQLList is statuses as a parenthesised SQL list of literals, for
// `status IN ...` (the statuses are constants, never user input).
func SQLList(statuses []Status) string {
	q := make([]string, len(statuses))
	for i, s := range statuses {
		q[i] = "'" + string(s) + "'"
	}
	return "(" + strings.Join(q, ", ") + ")"
}

// IsStatus tells whether s names a delivery status.
func IsStatus(s string) bool {
	for _, st := range append(append([]Status{}, InFlightStatuses...), FinalStatuses...) {
		if string(st) == s {
			return true
		}
	}
	return false
}
