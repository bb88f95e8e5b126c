package chaos

import (
	"fmt"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/hookrelay/hookrelay/store"
)

// cutBefore and cutAfter bound when, around a fault's start, an attempts
// row may have been opened and still be one the fault cut off between its
// commit and its request: open at the kill, so opened at most an attempt's
// timeout (and its open) before it; a second after it for the kill to land.
const (
	cutBefore = AttemptTimeout + 3*time.Second
	cutAfter  = time.Second
)

// Faults notes when a scenario's faults began.
type Faults struct {
	mu sync.Mutex
	at []time.Time
}

// Mark notes that a fault begins now.
func (f *Faults) Mark() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.at = append(f.at, time.Now())
}

// near reports whether a row opened at t was open at one of the faults.
func (f *Faults) near(t time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, at := range f.at {
		if !t.Before(at.Add(-cutBefore)) && !t.After(at.Add(cutAfter)) {
			return true
		}
	}
	return false
}

// deliveryRows is one delivery's attempts rows: how many, and when each
// of those closed unknown was opened.
type deliveryRows struct {
	ID      string
	Rows    int
	Unknown []time.Time
}

// Match counts the subscription's attempts rows into t (Rows, Unknown) and
// compares them, delivery by delivery, to the requests the receiver logged
// for each (requestsFor). The one
// difference it accepts is a row a crash cut off between its commit and its
// request (the row is written before the request goes out): closed
// unknown, with no request behind it, opened just before one of faults
// (t.Cut). Every other difference is described in t.Unmatched.
func Match(db *sqlx.DB, subID string, requestsFor func(deliveryID string) int, faults *Faults, t *Tally) error {
	var rows []struct {
		ID        string     `db:"id"`
		StartedAt *time.Time `db:"started_at"`
		Unknown   bool       `db:"unknown"`
	}
	err := db.Select(&rows, `SELECT d.id, a.started_at, coalesce(a.error_kind = $2, false) AS unknown
		FROM deliveries d LEFT JOIN attempts a ON a.delivery_id = d.id
		WHERE d.subscription_id = $1 ORDER BY d.id`, subID, store.KindUnknown)
	if err != nil {
		return err
	}
	var ds []deliveryRows
	for _, r := range rows {
		if len(ds) == 0 || ds[len(ds)-1].ID != r.ID {
			ds = append(ds, deliveryRows{ID: r.ID})
		}
		d := &ds[len(ds)-1]
		if r.StartedAt != nil {
			d.Rows++
			t.Rows++
		}
		if r.Unknown {
			d.Unknown = append(d.Unknown, *r.StartedAt)
			t.Unknown++
		}
	}
	t.Cut, t.Unmatched = match(ds, requestsFor, faults)
	return nil
}

// match is Match on deliveries ds: how many rows a fault cut off, and the
// deliveries whose rows and requests differ otherwise.
func match(ds []deliveryRows, requestsFor func(deliveryID string) int, faults *Faults) (cut int, unmatched []string) {
	for _, d := range ds {
		requests := requestsFor(d.ID)
		cutOff := 0
		for _, at := range d.Unknown {
			if faults.near(at) {
				cutOff++
			}
		}
		extra := d.Rows - requests
		if extra < 0 || extra > cutOff {
			unmatched = append(unmatched, fmt.Sprintf("%s: %d attempts rows (%d unknown, %d of them open at a fault) for %d requests",
				d.ID, d.Rows, len(d.Unknown), cutOff, requests))
			continue
		}
		cut += extra
	}
	return cut, unmatched
}
