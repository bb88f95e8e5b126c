package store

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"
)

// CountPrepares makes st count in n the statements it prepares.
func CountPrepares(st *Store, n *atomic.Int64) {
	prepare := st.prep.prepare
	st.prep.prepare = func(ctx context.Context, query string) (*sqlx.Stmt, error) {
		n.Add(1)
		return prepare(ctx, query)
	}
}

// Len is the number of targets waiting to be taken.
func (f *FirstAttempts) Len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.byID)
}

// NoteUnsent makes st remember, as a failed open would, a row of delivery
// id started at at.
func NoteUnsent(st *Store, id string, at time.Time) { st.unsent.note([]string{id}, at) }

// UnsentLen is the number of deliveries st remembers failed opens of.
func UnsentLen(st *Store) int {
	st.unsent.mu.Lock()
	defer st.unsent.mu.Unlock()
	return len(st.unsent.rows)
}
