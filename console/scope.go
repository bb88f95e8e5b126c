package console

import (
	"context"
	"slices"

	"github.com/hookrelay/hookrelay/store"
)

// A portal sees its account through its scope: the endpoints listed (all
// of the account's when none is), and of those only what concerns the
// event types listed (any when none is). An operator sees the whole
// account. Anything outside is answered as if it did not exist (404).

// eventType tells whether the event type t is in v's scope.
func (v *view) eventType(t string) bool {
	return !v.Portal || len(v.Types) == 0 || slices.Contains(v.Types, t)
}

// subscriptionIn tells whether sub is in v's scope: on a listed endpoint
// (or endpoints unrestricted) and naming only listed event types.
func (v *view) subscriptionIn(sub store.Subscription) bool {
	if !v.Portal {
		return true
	}
	if len(v.Endpoints) > 0 && !slices.Contains(v.Endpoints, sub.EndpointID) {
		return false
	}
	for _, t := range sub.EventTypes {
		if !v.eventType(t) {
			return false
		}
	}
	return len(v.Types) == 0 || len(sub.EventTypes) > 0
}

// endpointScope is the endpoints v sees: all of the account's (all true),
// or exactly ids, perhaps none.
func (h *Console) endpointScope(ctx context.Context, v *view) (ids []string, all bool, err error) {
	switch {
	case !v.Portal || len(v.Endpoints) == 0 && len(v.Types) == 0:
		return nil, true, nil
	case len(v.Endpoints) > 0:
		return v.Endpoints, false, nil
	}
	// Event types alone: the endpoints of the subscriptions in scope.
	subs, err := h.subscriptions(ctx, v)
	if err != nil {
		return nil, false, err
	}
	ids = []string{}
	for _, s := range subs {
		if !slices.Contains(ids, s.EndpointID) {
			ids = append(ids, s.EndpointID)
		}
	}
	return ids, false, nil
}

// endpointIn tells whether the endpoint id is in v's scope.
func (h *Console) endpointIn(ctx context.Context, v *view, id string) (bool, error) {
	ids, all, err := h.endpointScope(ctx, v)
	return all || slices.Contains(ids, id), err
}

// scoped narrows f to v's scope; false when nothing can match.
func (h *Console) scoped(ctx context.Context, v *view, f *store.ListFilter) (bool, error) {
	ids, all, err := h.endpointScope(ctx, v)
	if err != nil || (!all && len(ids) == 0) {
		return false, err
	}
	if !all {
		f.EndpointIDs = ids
	}
	if v.Portal && len(v.Types) > 0 {
		if len(f.EventTypes) == 0 {
			f.EventTypes = v.Types
		}
		for _, t := range f.EventTypes {
			if !v.eventType(t) {
				return false, nil
			}
		}
	}
	return true, nil
}

// deliveryIn tells whether d is in v's scope.
func (h *Console) deliveryIn(ctx context.Context, v *view, d store.Delivery) (bool, error) {
	if !v.eventType(d.EventType) {
		return false, nil
	}
	return h.endpointIn(ctx, v, d.EndpointID)
}

// subscriptions are the account's subscriptions in v's scope.
func (h *Console) subscriptions(ctx context.Context, v *view) ([]store.Subscription, error) {
	subs, err := h.opts.Store.ListSubscriptions(ctx, v.Account)
	if err != nil {
		return nil, err
	}
	out := subs[:0]
	for _, s := range subs {
		if v.subscriptionIn(s) {
			out = append(out, s)
		}
	}
	return out, nil
}

// endpoints are the account's endpoints in v's scope.
func (h *Console) endpoints(ctx context.Context, v *view) ([]store.EndpointSummary, error) {
	ids, all, err := h.endpointScope(ctx, v)
	if err != nil || (!all && len(ids) == 0) {
		return []store.EndpointSummary{}, err
	}
	return h.opts.Store.ListEndpoints(ctx, v.Account, ids)
}
