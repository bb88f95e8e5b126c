package api

import (
	"context"
	"sync"

	"github.com/hookrelay/hookrelay/store"
)

// DefaultPublishesPerType is how many events of one type one account may
// have being stored at once (Server.PublishesPerType); a publish past it
// waits its turn. A burst published by many clients at once then stores
// its events a few at a time, leaving PostgreSQL and the CPU to every
// other type's publishes and to the deliveries in flight
// (docs/endpoints.md#isolation).
const DefaultPublishesPerType = 2

// lanes bounds the publishes being stored at once per key (an account and
// an event type) to per; the others wait their turn, first come, first
// served. The zero value is not usable (newLanes).
type lanes struct {
	per int
	mu  sync.Mutex
	m   map[string]*lane
}

// lane is one key's slots, and how many publishes hold or wait for one.
type lane struct {
	slots chan struct{}
	users int
}

func newLanes(per int) *lanes {
	if per <= 0 {
		per = DefaultPublishesPerType
	}
	return &lanes{per: per, m: map[string]*lane{}}
}

// enter waits for a slot of key's lane, or for ctx to end; the caller
// calls the returned leave once done. A nil *lanes bounds nothing.
func (l *lanes) enter(ctx context.Context, key string) (leave func(), err error) {
	if l == nil {
		return func() {}, nil
	}
	l.mu.Lock()
	ln := l.m[key]
	if ln == nil {
		ln = &lane{slots: make(chan struct{}, l.per)}
		l.m[key] = ln
	}
	ln.users++
	l.mu.Unlock()
	select {
	case ln.slots <- struct{}{}:
		return func() { <-ln.slots; l.drop(key, ln) }, nil
	case <-ctx.Done():
		l.drop(key, ln)
		return nil, ctx.Err()
	}
}

// drop counts one user of key's lane fewer, forgetting the lane when none
// is left.
func (l *lanes) drop(key string, ln *lane) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ln.users--; ln.users == 0 {
		delete(l.m, key)
	}
}

// storeEvent stores ev (store.Publish) once its account and type's lane
// has room.
func (s *Server) storeEvent(ctx context.Context, ev store.Event) (store.PublishResult, error) {
	leave, err := s.lanes.enter(ctx, ev.AccountID+"\x00"+ev.Type)
	if err != nil {
		return store.PublishResult{}, err
	}
	defer leave()
	return s.Store.Publish(ctx, ev)
}
