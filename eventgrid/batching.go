package eventgrid

// IoT Edge output batching (docs/policies.md#eventgrid-edge): the vendor's bounds
// on maxEventsPerBatch and preferredBatchSizeInKilobytes.
const (
	MaxBatchEvents = 50
	MaxBatchKB     = 1033
)

// Batching reports whether the subscription uses output batching.
func (s *Settings) Batching() bool { return s != nil && s.MaxEventsPerBatch > 0 }

// BatchLimits are the bounds of one request of the subscription: at most
// maxEvents events, within maxBytes (0: no bound). One event a request
// unless it batches.
func (s *Settings) BatchLimits() (maxEvents, maxBytes int) {
	if !s.Batching() {
		return 1, 0
	}
	return s.MaxEventsPerBatch, s.PreferredBatchSizeKB * 1024
}

// Pick chooses how many of the waiting events (their sizes, oldest first)
// one request carries: at most maxEvents, within maxBytes unless it is the
// first (an event larger than the preferred size goes alone). full says a
// whole batch was waiting.
func Pick(sizes []int, maxEvents, maxBytes int) (n int, full bool) {
	total := 0
	for i, size := range sizes {
		if i == maxEvents {
			return i, true
		}
		if i > 0 && maxBytes > 0 && total+size > maxBytes {
			return i, true
		}
		total += size
	}
	return len(sizes), len(sizes) == maxEvents
}
