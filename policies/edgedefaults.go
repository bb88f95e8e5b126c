package policies

import (
	"encoding/json"
	"fmt"
)

// EdgeDefaults are the module-wide limits of Event Grid on IoT Edge
// (docs/policies.md#eventgrid-edge): broker__defaultMaxDeliveryAttempts and
// broker__defaultEventTimeToLiveInSeconds. They apply to every subscription of
// the eventgrid-edge policy that does not set its own; zero keeps the
// policy's default (30 attempts, 7,200 s).
type EdgeDefaults struct {
	MaxDeliveryAttempts      int
	EventTimeToLiveInSeconds int
}

// Apply returns o with the defaults filled in where o leaves them unset, for
// the eventgrid-edge policy; other policies get o unchanged.
func (d EdgeDefaults) Apply(name string, o Overrides) Overrides {
	if name != NameEventGridEdge {
		return o
	}
	if o.MaxAttempts == nil && d.MaxDeliveryAttempts > 0 {
		n := d.MaxDeliveryAttempts
		o.MaxAttempts = &n
	}
	if o.TTLSeconds == nil && d.EventTimeToLiveInSeconds > 0 {
		n := d.EventTimeToLiveInSeconds
		o.TTLSeconds = &n
	}
	return o
}

// Validate checks the defaults against the ranges a subscription's own
// retryPolicy must fall in (1-30 attempts, 60-86,400 s).
func (d EdgeDefaults) Validate() error {
	if d.MaxDeliveryAttempts != 0 && (d.MaxDeliveryAttempts < 1 || d.MaxDeliveryAttempts > eventGridAttempts) {
		return fmt.Errorf("must be between 1 and %d (%s)", eventGridAttempts, eventGridSection)
	}
	if d.EventTimeToLiveInSeconds != 0 && (d.EventTimeToLiveInSeconds < eventGridTTLMin || d.EventTimeToLiveInSeconds > eventGridTTLMax) {
		return fmt.Errorf("must be between %d and %d seconds (%s)", eventGridTTLMin, eventGridTTLMax, eventGridSection)
	}
	return nil
}

// ResolveJSON resolves the named policy with its retry_policy JSON (may be
// empty) and the edge defaults.
func (d EdgeDefaults) ResolveJSON(name string, retryPolicy []byte) (Policy, error) {
	var o Overrides
	if len(retryPolicy) > 0 {
		if err := json.Unmarshal(retryPolicy, &o); err != nil {
			return Policy{}, fmt.Errorf("retry_policy: %w", err)
		}
	}
	return Resolve(name, d.Apply(name, o))
}
