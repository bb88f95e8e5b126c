package store

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/lib/pq"
)

// unsentMax bounds the rows an unsent remembers; past it, a failed open is
// not remembered and its row, if it was written, ends unknown as any row a
// crash cut off.
const unsentMax = 10_000

// unsent remembers the attempts rows this process opened, or may have,
// that no request went out for: those whose statement failed (the row may
// still have been written: the commit can succeed while its answer is
// lost, as when PostgreSQL stops; a request goes only after its row is
// open), and those a publish opened for a first attempt handed over that
// was not taken (FirstAttempts). The next open of the same delivery in this
// process removes such a row (dropUnsent), and so does the workers' loop
// (DropUnsent) as soon as PostgreSQL answers, even when another process's
// open closed it as unknown meanwhile, so that every row left stands for a
// request that may have been sent. A row remembered by a process that
// stopped ends unknown as before. The zero value is ready to use.
type unsent struct {
	mu   sync.Mutex
	rows map[string][]string // delivery id → each row's started_at, RFC 3339
}

// note remembers the rows, started at startedAt, that a failed open of ids
// may have written.
func (u *unsent) note(ids []string, startedAt time.Time) {
	at := startedAt.Format(time.RFC3339Nano)
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, id := range ids {
		u.add(id, at)
	}
}

// add remembers the row of delivery id started at at; u.mu is held.
func (u *unsent) add(id, at string) {
	if u.rows == nil {
		u.rows = map[string][]string{}
	}
	if len(u.rows) >= unsentMax && u.rows[id] == nil {
		return
	}
	u.rows[id] = append(u.rows[id], at)
}

// of returns what is remembered of ids (of every delivery when ids is
// nil), as parallel lists of delivery ids and started_at times, and keeps
// it until forget: an open of the same delivery meanwhile deletes its rows
// first all the same.
func (u *unsent) of(ids []string) (ds, at []string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if ids == nil {
		ids = slices.Collect(maps.Keys(u.rows))
	}
	for _, id := range ids {
		for _, t := range u.rows[id] {
			ds, at = append(ds, id), append(at, t)
		}
	}
	return ds, at
}

// forget removes what of returned and is still remembered.
func (u *unsent) forget(ds, at []string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for i, id := range ds {
		u.rows[id] = slices.DeleteFunc(u.rows[id], func(t string) bool { return t == at[i] })
		if len(u.rows[id]) == 0 {
			delete(u.rows, id)
		}
	}
}

// opening runs open, the statement that opens a row of each of ids started
// at startedAt: after removing the rows a failed open of theirs left
// (dropUnsent), and remembering its own if it fails.
func (s *Store) opening(ctx context.Context, ids []string, startedAt time.Time, open func() error) error {
	if err := s.dropUnsent(ctx, ids); err != nil {
		return err
	}
	if err := open(); err != nil {
		s.unsent.note(ids, startedAt)
		return err
	}
	return nil
}

// dropUnsent deletes the rows still open that failed opens of this process
// wrote (unsent) for ids, or for every delivery when ids is nil, and
// forgets them; on error they stay remembered. An open runs it for its
// deliveries first.
func (s *Store) dropUnsent(ctx context.Context, ids []string) error {
	ds, at := s.unsent.of(ids)
	if len(ds) == 0 {
		return nil
	}
	_, err := s.db.ExecContext(ctx, `DELETE FROM attempts a USING unnest($1::text[], $2::timestamptz[]) AS u(delivery_id, started_at)
		WHERE a.delivery_id = u.delivery_id AND a.started_at = u.started_at AND a.error_kind IN ($3, $4)`,
		pq.Array(ds), pq.Array(at), KindInFlight, KindUnknown)
	if err != nil {
		return fmt.Errorf("store: drop unsent attempts: %w", err)
	}
	s.unsent.forget(ds, at)
	return nil
}

// DropUnsent is dropUnsent for every delivery, without waiting for the next
// open of one: that may come from another process (a workflow task that
// timed out moves on). It expires the first attempts handed over first
// (FirstAttempts). The workers run it every second; it makes no statement
// when nothing is remembered.
func (s *Store) DropUnsent(ctx context.Context) error {
	s.firsts.sweep(false)
	return s.dropUnsent(ctx, nil)
}

// DropHandedOver deletes the rows of every first attempt handed over to
// this process's worker and not taken (FirstAttempts), as unsent: the
// worker runs it once it stopped, so that another process does not close
// them as unknown when it makes those attempts.
func (s *Store) DropHandedOver(ctx context.Context) error {
	s.firsts.sweep(true)
	return s.dropUnsent(ctx, nil)
}
