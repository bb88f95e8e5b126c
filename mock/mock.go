// Package mock holds test doubles of hookrelay's narrow interfaces, each a
// struct of function fields, for fast unit tests beside the real-server
// tests (as in Ben Johnson's wtf). Nothing a user runs is replaced by them.
package mock

import (
	"context"

	"github.com/hookrelay/hookrelay/policies"
)

// EndpointSignaler is an activities.EndpointSignaler whose Signal calls
// SignalFn.
type EndpointSignaler struct {
	SignalFn func(ctx context.Context, endpointID, name string, arg any, h policies.Health) error
}

// Signal calls SignalFn.
func (s *EndpointSignaler) Signal(ctx context.Context, endpointID, name string, arg any, h policies.Health) error {
	return s.SignalFn(ctx, endpointID, name, arg, h)
}
