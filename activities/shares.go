package activities

import "sync"

// Defaults of Shares (docs/endpoints.md#isolation).
const (
	// DefaultLocalPerEndpoint bounds the first attempts one endpoint makes
	// at once as local activities in one process.
	DefaultLocalPerEndpoint = 32
	// DefaultLocalShare is the part of the worker's local-activity slots
	// first attempts may hold at once, in percent: the rest stays free for
	// the bookkeeping of every delivery.
	DefaultLocalShare = 50
)

// Shares bounds the first attempts that run as local activities, inside the
// workflow task that started the delivery: at most PerEndpoint at once for
// one endpoint, and at most Total for all endpoints of the process. A first
// attempt past either bound is handed over (DeliverResult.HandedOver): its
// workflow makes it as a regular activity on the deliveries queue, whose
// slots no workflow task, timer or bookkeeping step needs. So a receiver
// that holds its requests, or an endpoint's burst, holds at most its share
// of what every other endpoint's deliveries run on. The zero value bounds
// nothing; a nil *Shares hands nothing over.
type Shares struct {
	// PerEndpoint and Total are the bounds; zero means no bound.
	PerEndpoint, Total int

	mu       sync.Mutex
	inFlight map[string]int
	total    int
}

// NewShares returns Shares bounding each endpoint to perEndpoint first
// attempts at once and the process to total.
func NewShares(perEndpoint, total int) *Shares {
	return &Shares{PerEndpoint: perEndpoint, Total: total}
}

// take reserves a local first attempt for the endpoint, false when its share
// or the process's is used up; each true must be given back with done.
func (s *Shares) take(endpointID string) bool {
	if s == nil {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.inFlight[endpointID]
	if (s.PerEndpoint > 0 && n >= s.PerEndpoint) || (s.Total > 0 && s.total >= s.Total) {
		return false
	}
	if s.inFlight == nil {
		s.inFlight = map[string]int{}
	}
	s.inFlight[endpointID] = n + 1
	s.total++
	return true
}

// done gives back a local first attempt taken for the endpoint.
func (s *Shares) done(endpointID string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := s.inFlight[endpointID]; n > 1 {
		s.inFlight[endpointID] = n - 1
	} else {
		delete(s.inFlight, endpointID)
	}
	s.total--
}

// InFlight is how many local first attempts the endpoint has at once now.
func (s *Shares) InFlight(endpointID string) int {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inFlight[endpointID]
}
