package eventgrid

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hookrelay/hookrelay/policies"
)

// Subscription is the body of PUT /eventgrid/subscriptions/{name}:
// Azure Event Grid's event subscription (docs/policies.md#eventgrid,
// docs/policies.md#eventgrid-edge), with the vendor's field names.
type Subscription struct {
	Properties *Properties `json:"properties"`
}

// Properties are an event subscription's properties.
type Properties struct {
	Destination           *Destination `json:"destination"`
	Filter                *Filter      `json:"filter,omitempty"`
	EventDeliverySchema   string       `json:"eventDeliverySchema,omitempty"`
	RetryPolicy           *Retry       `json:"retryPolicy,omitempty"`
	DeadLetterDestination *DeadLetter  `json:"deadLetterDestination,omitempty"`
	OutputBatching        *Batching    `json:"outputBatching,omitempty"`
}

// Destination is a WebHook destination.
type Destination struct {
	EndpointType string    `json:"endpointType"`
	Properties   *Endpoint `json:"properties"`
}

// Endpoint are a WebHook's properties. IoT Edge puts the schema and
// the batching bounds here; HookrelayPreValidated (hookrelay's own) skips
// the validation handshake.
type Endpoint struct {
	EndpointURL                   string `json:"endpointUrl"`
	EventDeliverySchema           string `json:"eventDeliverySchema,omitempty"`
	MaxEventsPerBatch             *int   `json:"maxEventsPerBatch,omitempty"`
	PreferredBatchSizeInKilobytes *int   `json:"preferredBatchSizeInKilobytes,omitempty"`
	HookrelayPreValidated         bool   `json:"hookrelayPreValidated,omitempty"`
}

// Filter selects event types; none means all.
type Filter struct {
	IncludedEventTypes []string `json:"includedEventTypes,omitempty"`
}

// Retry is a subscription's retryPolicy.
type Retry struct {
	MaxDeliveryAttempts      *int `json:"maxDeliveryAttempts,omitempty"`
	EventTimeToLiveInMinutes *int `json:"eventTimeToLiveInMinutes,omitempty"`
	EventExpiryInMinutes     *int `json:"eventExpiryInMinutes,omitempty"`
}

// DeadLetter turns dead-lettering on. Dead letters are kept in
// hookrelay's store whatever the endpointType (StorageBlob or Hookrelay);
// a StorageBlob destination with a resourceId also writes each to that
// storage account's blobContainerName (BlobDestination); raiseEvent
// publishes a hookrelay.deadlettered event for each (and, with a blob, a
// Microsoft.Storage.BlobCreated event).
type DeadLetter struct {
	EndpointType string           `json:"endpointType"`
	Properties   *DeadLetterProps `json:"properties,omitempty"`
}

// DeadLetterProps are a dead-letter destination's properties.
type DeadLetterProps struct {
	ResourceID        string `json:"resourceId,omitempty"`
	BlobContainerName string `json:"blobContainerName,omitempty"`
	RaiseEvent        bool   `json:"raiseEvent,omitempty"`
}

// Batching is IoT Edge output batching.
type Batching struct {
	MaxEventsPerBatch             *int `json:"maxEventsPerBatch,omitempty"`
	PreferredBatchSizeInKilobytes *int `json:"preferredBatchSizeInKilobytes,omitempty"`
}

// Vendor limits: retryPolicy (docs/policies.md#eventgrid) and IoT Edge batching.
const (
	egMaxAttempts   = 30
	egMaxTTLMinutes = 1440
	pProps          = "properties."
	pDest           = pProps + "destination."
	pRetry          = pProps + "retryPolicy."
)

// Spec is a validated subscription: what hookrelay stores for it.
type Spec struct {
	URL          string
	EventTypes   []string
	Policy       string
	Overrides    policies.Overrides
	Settings     Settings
	PreValidated bool
}

// URLCheck validates a WebHook URL; field names it in the error.
type URLCheck func(field, raw string) error

// Spec validates the body for mode (cloud or edge) and maps it; checkURL
// validates the endpoint's URL.
func (r *Subscription) Spec(mode string, checkURL URLCheck) (Spec, error) {
	sp := Spec{Policy: policies.NameEventGrid, Settings: Settings{Mode: mode}}
	if mode == ModeEdge {
		sp.Policy = policies.NameEventGridEdge
	}
	p := r.Properties
	if p == nil {
		return sp, invalid("properties", "properties is required")
	}
	if err := checkDestination(p, &sp, checkURL); err != nil {
		return sp, err
	}
	for _, step := range []func(*Properties, *Spec) error{checkSchema, checkFilter, checkRetry, checkDeadLetter, checkBatching} {
		if err := step(p, &sp); err != nil {
			return sp, err
		}
	}
	if _, err := policies.Resolve(sp.Policy, sp.Overrides); err != nil {
		return sp, vendorField(err)
	}
	sp.Settings.Request, _ = json.Marshal(p)
	return sp, nil
}

func checkDestination(p *Properties, sp *Spec, checkURL URLCheck) error {
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
	if err := checkURL(pDest+"properties.endpointUrl", d.Properties.EndpointURL); err != nil {
		return err
	}
	sp.URL, sp.PreValidated = d.Properties.EndpointURL, d.Properties.HookrelayPreValidated
	return nil
}

func checkSchema(p *Properties, sp *Spec) error {
	field, v := pProps+"eventDeliverySchema", p.EventDeliverySchema
	if inner := p.Destination.Properties.EventDeliverySchema; inner != "" {
		if v != "" && !strings.EqualFold(v, inner) {
			return invalid(pDest+"properties.eventDeliverySchema", "differs from properties.eventDeliverySchema")
		}
		field, v = pDest+"properties.eventDeliverySchema", inner
	}
	switch {
	case v == "" || strings.EqualFold(v, SchemaEventGrid):
		sp.Settings.Schema = SchemaEventGrid
	case strings.EqualFold(v, SchemaCloudEvents):
		sp.Settings.Schema = SchemaCloudEvents
	default:
		return invalid(field, "must be %s or %s, got %q", SchemaEventGrid, SchemaCloudEvents, v)
	}
	return nil
}

func checkFilter(p *Properties, sp *Spec) error {
	sp.EventTypes = []string{"*"}
	if p.Filter == nil || len(p.Filter.IncludedEventTypes) == 0 {
		return nil
	}
	for i, t := range p.Filter.IncludedEventTypes {
		if strings.TrimSpace(t) == "" || len(t) > 200 {
			return invalid(pProps+"filter.includedEventTypes", "includedEventTypes[%d] must be a non-empty string of at most 200 characters", i)
		}
	}
	sp.EventTypes = p.Filter.IncludedEventTypes
	return nil
}

func checkRetry(p *Properties, sp *Spec) error {
	r := p.RetryPolicy
	if r == nil {
		return nil
	}
	if v := r.MaxDeliveryAttempts; v != nil {
		if *v < 1 || *v > egMaxAttempts {
			return invalid(pRetry+"maxDeliveryAttempts", "must be between 1 and %d (docs/policies.md#eventgrid)", egMaxAttempts)
		}
		sp.Overrides.MaxAttempts = v
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
			return invalid(field, "must be between 1 and %d minutes (docs/policies.md#eventgrid)", egMaxTTLMinutes)
		}
		secs := *ttl * 60
		sp.Overrides.TTLSeconds = &secs
	}
	return nil
}

func checkDeadLetter(p *Properties, sp *Spec) error {
	d := p.DeadLetterDestination
	if d == nil {
		return nil
	}
	if !strings.EqualFold(d.EndpointType, "StorageBlob") && !strings.EqualFold(d.EndpointType, "Hookrelay") {
		return invalid(pProps+"deadLetterDestination.endpointType", `endpointType must be "StorageBlob" or "Hookrelay", got %q`, d.EndpointType)
	}
	blob, err := blobDestination(d.Properties)
	if err != nil {
		return err
	}
	if blob != nil && !strings.EqualFold(d.EndpointType, "StorageBlob") {
		return invalid(pProps+"deadLetterDestination.endpointType", `a resourceId needs endpointType "StorageBlob", got %q`, d.EndpointType)
	}
	on := true
	sp.Overrides.DeadLettering = &on
	sp.Settings.RaiseDeadLetterEvent = d.Properties != nil && d.Properties.RaiseEvent
	sp.Settings.DeadLetterBlob = blob
	return nil
}

func checkBatching(p *Properties, sp *Spec) error {
	b, field := p.OutputBatching, pProps+"outputBatching"
	if in := p.Destination.Properties; in.MaxEventsPerBatch != nil || in.PreferredBatchSizeInKilobytes != nil {
		if b != nil {
			return invalid(pDest+"properties.maxEventsPerBatch", "give outputBatching or the destination's batching properties, not both")
		}
		b, field = &Batching{in.MaxEventsPerBatch, in.PreferredBatchSizeInKilobytes}, pDest+"properties"
	}
	if b == nil {
		return nil
	}
	if sp.Settings.Mode != ModeEdge {
		return invalid(field, "output batching is an Event Grid on IoT Edge feature: use ?mode=edge")
	}
	if b.MaxEventsPerBatch == nil || *b.MaxEventsPerBatch < 1 || *b.MaxEventsPerBatch > MaxBatchEvents {
		return invalid(field+".maxEventsPerBatch", "must be between 1 and %d", MaxBatchEvents)
	}
	kb := MaxBatchKB
	if v := b.PreferredBatchSizeInKilobytes; v != nil {
		if *v < 1 || *v > MaxBatchKB {
			return invalid(field+".preferredBatchSizeInKilobytes", "must be between 1 and %d", MaxBatchKB)
		}
		kb = *v
	}
	if *b.MaxEventsPerBatch > 1 {
		sp.Settings.MaxEventsPerBatch, sp.Settings.PreferredBatchSizeKB = *b.MaxEventsPerBatch, kb
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

// invalid is a FieldError naming the offending field by its vendor path.
func invalid(field, format string, args ...any) error {
	return &policies.FieldError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// DecideValidation sets the validation state and reports whether a
// handshake must be started: edge and pre-validated subscriptions need none;
// a replace with the same URL keeps the state it had, and (re)starts the
// handshake with the same code while it is pending, in case the first start
// failed ("PUT it again"). A new handshake gets newCode.
func (sp *Spec) DecideValidation(prev *Settings, prevURL, newCode string) bool {
	switch {
	case sp.Settings.Mode == ModeEdge:
		sp.Settings.Validation = ValidationNone
	case sp.PreValidated:
		sp.Settings.Validation = ValidationPreValidated
	case prev != nil && prevURL == sp.URL && prev.Validation != ValidationNone && prev.Validation != ValidationFailed:
		sp.Settings.Validation, sp.Settings.ValidationCode = prev.Validation, prev.ValidationCode
		return prev.Validation == ValidationPending
	default:
		sp.Settings.Validation, sp.Settings.ValidationCode = ValidationPending, newCode
		return true
	}
	return false
}
