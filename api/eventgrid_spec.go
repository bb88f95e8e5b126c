package api

import (
	"encoding/json"
	"strings"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
)

// EventGridSubscription is the body of PUT /eventgrid/subscriptions/{name}:
// Azure Event Grid's event subscription (POLICIES.md §eventgrid,
// §eventgrid-edge), with the vendor's field names.
type EventGridSubscription struct {
	Properties *EventGridProperties `json:"properties"`
}

// EventGridProperties are an event subscription's properties.
type EventGridProperties struct {
	Destination           *EventGridDestination `json:"destination"`
	Filter                *EventGridFilter      `json:"filter,omitempty"`
	EventDeliverySchema   string                `json:"eventDeliverySchema,omitempty"`
	RetryPolicy           *EventGridRetry       `json:"retryPolicy,omitempty"`
	DeadLetterDestination *EventGridDeadLetter  `json:"deadLetterDestination,omitempty"`
	OutputBatching        *EventGridBatching    `json:"outputBatching,omitempty"`
}

// EventGridDestination is a WebHook destination.
type EventGridDestination struct {
	EndpointType string             `json:"endpointType"`
	Properties   *EventGridEndpoint `json:"properties"`
}

// EventGridEndpoint are a WebHook's properties. IoT Edge puts the schema and
// the batching bounds here; HookrelayPreValidated (hookrelay's own) skips
// the validation handshake.
type EventGridEndpoint struct {
	EndpointURL                   string `json:"endpointUrl"`
	EventDeliverySchema           string `json:"eventDeliverySchema,omitempty"`
	MaxEventsPerBatch             *int   `json:"maxEventsPerBatch,omitempty"`
	PreferredBatchSizeInKilobytes *int   `json:"preferredBatchSizeInKilobytes,omitempty"`
	HookrelayPreValidated         bool   `json:"hookrelayPreValidated,omitempty"`
}

// EventGridFilter selects event types; none means all.
type EventGridFilter struct {
	IncludedEventTypes []string `json:"includedEventTypes,omitempty"`
}

// EventGridRetry is a subscription's retryPolicy.
type EventGridRetry struct {
	MaxDeliveryAttempts      *int `json:"maxDeliveryAttempts,omitempty"`
	EventTimeToLiveInMinutes *int `json:"eventTimeToLiveInMinutes,omitempty"`
	EventExpiryInMinutes     *int `json:"eventExpiryInMinutes,omitempty"`
}

// EventGridDeadLetter turns dead-lettering on. Dead letters are kept in
// hookrelay's store whatever the endpointType (StorageBlob or Hookrelay);
// raiseEvent publishes a hookrelay.deadlettered event for each.
type EventGridDeadLetter struct {
	EndpointType string                    `json:"endpointType"`
	Properties   *EventGridDeadLetterProps `json:"properties,omitempty"`
}

// EventGridDeadLetterProps are a dead-letter destination's properties.
type EventGridDeadLetterProps struct {
	ResourceID        string `json:"resourceId,omitempty"`
	BlobContainerName string `json:"blobContainerName,omitempty"`
	RaiseEvent        bool   `json:"raiseEvent,omitempty"`
}

// EventGridBatching is IoT Edge output batching.
type EventGridBatching struct {
	MaxEventsPerBatch             *int `json:"maxEventsPerBatch,omitempty"`
	PreferredBatchSizeInKilobytes *int `json:"preferredBatchSizeInKilobytes,omitempty"`
}

// Vendor limits: retryPolicy (POLICIES.md §eventgrid) and IoT Edge batching.
const (
	egMaxAttempts    = 30
	egMaxTTLMinutes  = 1440
	egMaxBatchEvents = 50
	egMaxBatchKB     = 1033
	pProps           = "properties."
	pDest            = pProps + "destination."
	pRetry           = pProps + "retryPolicy."
)

// egSpec is a validated subscription: what hookrelay stores for it.
type egSpec struct {
	url        string
	eventTypes []string
	policy     string
	overrides  policies.Overrides
	settings   store.EventGridSettings
	preValid   bool
}

// spec validates the body for mode (cloud or edge) and maps it.
func (r *EventGridSubscription) spec(mode string) (egSpec, error) {
	sp := egSpec{policy: policies.NameEventGrid, settings: store.EventGridSettings{Mode: mode}}
	if mode == store.EventGridEdge {
		sp.policy = policies.NameEventGridEdge
	}
	p := r.Properties
	if p == nil {
		return sp, invalid("properties", "properties is required")
	}
	for _, step := range []func(*EventGridProperties, *egSpec) error{checkDestination, checkSchema, checkFilter, checkRetry, checkDeadLetter, checkBatching} {
		if err := step(p, &sp); err != nil {
			return sp, err
		}
	}
	if _, err := policies.Resolve(sp.policy, sp.overrides); err != nil {
		return sp, vendorField(err)
	}
	sp.settings.Request, _ = json.Marshal(p)
	return sp, nil
}

func checkDestination(p *EventGridProperties, sp *egSpec) error {
	d := p.Destination
	if d == nil {
		return invalid(pProps+"destination", "properties.destination is required")
	}
	if !strings.EqualFold(d.EndpointType, "WebHook") {
		return invalid(pDest+"endpointType", `endpointType must be "WebHook", got %q`, d.EndpointType)
	}
	if d.Properties == nil {
		return invalid(pDest+"properties", "properties.destination.properties is required")
	}
	if err := validateURL(pDest+"properties.endpointUrl", d.Properties.EndpointURL); err != nil {
		return err
	}
	sp.url, sp.preValid = d.Properties.EndpointURL, d.Properties.HookrelayPreValidated
	return nil
}

func checkSchema(p *EventGridProperties, sp *egSpec) error {
	field, v := pProps+"eventDeliverySchema", p.EventDeliverySchema
	if inner := p.Destination.Properties.EventDeliverySchema; inner != "" {
		if v != "" && !strings.EqualFold(v, inner) {
			return invalid(pDest+"properties.eventDeliverySchema", "differs from properties.eventDeliverySchema")
		}
		field, v = pDest+"properties.eventDeliverySchema", inner
	}
	switch {
	case v == "" || strings.EqualFold(v, store.SchemaEventGrid):
		sp.settings.Schema = store.SchemaEventGrid
	case strings.EqualFold(v, store.SchemaCloudEvents):
		sp.settings.Schema = store.SchemaCloudEvents
	default:
		return invalid(field, "must be %s or %s, got %q", store.SchemaEventGrid, store.SchemaCloudEvents, v)
	}
	return nil
}

func checkFilter(p *EventGridProperties, sp *egSpec) error {
	sp.eventTypes = []string{"*"}
	if p.Filter == nil || len(p.Filter.IncludedEventTypes) == 0 {
		return nil
	}
	for i, t := range p.Filter.IncludedEventTypes {
		if strings.TrimSpace(t) == "" || len(t) > 200 {
			return invalid(pProps+"filter.includedEventTypes", "includedEventTypes[%d] must be a non-empty string of at most 200 characters", i)
		}
	}
	sp.eventTypes = p.Filter.IncludedEventTypes
	return nil
}

func checkRetry(p *EventGridProperties, sp *egSpec) error {
	r := p.RetryPolicy
	if r == nil {
		return nil
	}
	if v := r.MaxDeliveryAttempts; v != nil {
		if *v < 1 || *v > egMaxAttempts {
			return invalid(pRetry+"maxDeliveryAttempts", "must be between 1 and %d (POLICIES.md §eventgrid)", egMaxAttempts)
		}
		sp.overrides.MaxAttempts = v
	}
	ttl, field := r.EventTimeToLiveInMinutes, pRetry+"eventTimeToLiveInMinutes"
	if r.EventExpiryInMinutes != nil {
		if ttl != nil {
			return invalid(pRetry+"eventExpiryInMinutes", "give eventTimeToLiveInMinutes or eventExpiryInMinutes, not both")
		}
		ttl, field = r.EventExpiryInMinutes, pRetry+"eventExpiryInMinutes"
	}
	if ttl != nil {
		if *ttl < 1 || *ttl > egMaxTTLMinutes {
			return invalid(field, "must be between 1 and %d minutes (POLICIES.md §eventgrid)", egMaxTTLMinutes)
		}
		secs := *ttl * 60
		sp.overrides.TTLSeconds = &secs
	}
	return nil
}

func checkDeadLetter(p *EventGridProperties, sp *egSpec) error {
	d := p.DeadLetterDestination
	if d == nil {
		return nil
	}
	if !strings.EqualFold(d.EndpointType, "StorageBlob") && !strings.EqualFold(d.EndpointType, "Hookrelay") {
		return invalid(pProps+"deadLetterDestination.endpointType", `endpointType must be "StorageBlob" or "Hookrelay", got %q`, d.EndpointType)
	}
	on := true
	sp.overrides.DeadLettering = &on
	sp.settings.RaiseDeadLetterEvent = d.Properties != nil && d.Properties.RaiseEvent
	return nil
}

func checkBatching(p *EventGridProperties, sp *egSpec) error {
	b, field := p.OutputBatching, pProps+"outputBatching"
	if in := p.Destination.Properties; in.MaxEventsPerBatch != nil || in.PreferredBatchSizeInKilobytes != nil {
		if b != nil {
			return invalid(pDest+"properties.maxEventsPerBatch", "give outputBatching or the destination's batching properties, not both")
		}
		b, field = &EventGridBatching{in.MaxEventsPerBatch, in.PreferredBatchSizeInKilobytes}, pDest+"properties"
	}
	if b == nil {
		return nil
	}
	if sp.settings.Mode != store.EventGridEdge {
		return invalid(field, "output batching is an Event Grid on IoT Edge feature: use ?mode=edge")
	}
	if b.MaxEventsPerBatch == nil || *b.MaxEventsPerBatch < 1 || *b.MaxEventsPerBatch > egMaxBatchEvents {
		return invalid(field+".maxEventsPerBatch", "must be between 1 and %d", egMaxBatchEvents)
	}
	kb := egMaxBatchKB
	if v := b.PreferredBatchSizeInKilobytes; v != nil {
		if *v < 1 || *v > egMaxBatchKB {
			return invalid(field+".preferredBatchSizeInKilobytes", "must be between 1 and %d", egMaxBatchKB)
		}
		kb = *v
	}
	if *b.MaxEventsPerBatch > 1 {
		sp.settings.MaxEventsPerBatch, sp.settings.PreferredBatchSizeKB = *b.MaxEventsPerBatch, kb
	}
	return nil
}

// vendorField renames a policy override field to its Event Grid name.
func vendorField(err error) error {
	var names = map[string]string{
		"retry_policy.max_attempts": pRetry + "maxDeliveryAttempts",
		"retry_policy.ttl_seconds":  pRetry + "eventTimeToLiveInMinutes",
	}
	if fe, ok := err.(*policies.FieldError); ok {
		if n, ok := names[fe.Field]; ok {
			return invalid(n, "%s", fe.Message)
		}
	}
	return err
}
