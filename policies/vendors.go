package policies

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"time"
)

// ErrUnknown is returned for a policy name hookrelay does not know.
var ErrUnknown = errors.New("unknown policy")

// Names of the built-in policies.
const (
	NameWorkfront       = "workfront"
	NameWorkfrontLegacy = "workfront-legacy"
	NameSAP             = "sap"
	NameEventGrid       = "eventgrid"
	NameEventGridEdge   = "eventgrid-edge"
	NameCustom          = "custom"
)

// workfrontTimeout is how long a Workfront receiver has to answer: Adobe's
// Event Subscriptions FAQ makes 5 s the default timeout of the request that
// delivers a message (docs/policies.md#workfront), for both rule sets of the
// same product.
const workfrontTimeout = 5 * time.Second

// workfrontStep is the unit of the Workfront schedule: retry k comes
// (2^k - 1) * 84.8 s after the first failure (docs/policies.md#workfront).
const workfrontStep = 84800 * time.Millisecond

// WorkfrontHealth is the Workfront circuit breaker (docs/policies.md#workfront).
// A 410 does not disable: the document does not say it (docs/policies.md#common-rules).
var WorkfrontHealth = Health{
	Window:             24 * time.Hour,
	DisableMinAttempts: 100,
	DisableFailureRate: 0.70,
	DisableConsecutive: 2000,
	FreezeConsecutive:  2000,
	FreezeNoSuccessFor: 72 * time.Hour,
	FreezeAlwaysAfter:  50000,
	ProbeInterval:      10 * time.Minute,
}

// EventGridHealth is Event Grid's "delayed delivery" (docs/policies.md#eventgrid):
// disabled after 10 consecutive failures, probed every 10
// minutes, never frozen; no failure-rate rule.
var EventGridHealth = Health{
	Window:             24 * time.Hour,
	DisableConsecutive: 10,
	ProbeInterval:      10 * time.Minute,
}

// NoHealth is no circuit breaker (docs/policies.md#common-rules: workfront-legacy, sap,
// eventgrid-edge): every rule off. The probe interval only matters once an
// operator disables the endpoint by hand, which stops probes anyway.
var NoHealth = Health{Window: 24 * time.Hour, ProbeInterval: 10 * time.Minute}

// CustomHealth is a custom policy's breaker unless its health overrides set
// one (docs/policies.md#common-rules): no rule on but 410 Gone, which disables, as
// Standard Webhooks asks.
var CustomHealth = Health{Window: 24 * time.Hour, ProbeInterval: 10 * time.Minute, DisableOnGone: true}

// Workfront is Adobe Workfront's current rule set (docs/policies.md#workfront):
// 11 retries at offsets (2^k - 1) * 84.8 s from the first failure, then a
// dead letter instead of the original's drop.
func Workfront() Policy {
	return Policy{
		Name: NameWorkfront, Section: "docs/policies.md#workfront",
		Description:   "Adobe Workfront: 11 retries at (2^k-1)*84.8 s after the first failure (about 48 h)",
		Schedule:      Schedule{Kind: Offsets, Durations: workfrontOffsets(11)},
		MaxAttempts:   12,
		Timeout:       workfrontTimeout,
		DeadLettering: true, OnExhausted: DeadLetter,
		Health:        WorkfrontHealth,
		RetryAfterMax: time.Hour,
	}
}

// WorkfrontLegacy is Workfront's 2017 rule set (docs/policies.md#workfront-legacy):
// a retry every 10 minutes, at most 12, for two hours.
func WorkfrontLegacy() Policy {
	return Policy{
		Name: NameWorkfrontLegacy, Section: "docs/policies.md#workfront-legacy",
		Description:   "Workfront 2017: a retry every 10 minutes, 12 retries (two hours)",
		Schedule:      Schedule{Kind: Fixed, Interval: 10 * time.Minute},
		MaxAttempts:   13,
		Timeout:       workfrontTimeout,
		SuccessCodes:  []int{200},
		DeadLettering: true, OnExhausted: DeadLetter,
		Health:        NoHealth,
		RetryAfterMax: 10 * time.Minute,
	}
}

// SAP is SAP Open Connectors' retry mode (docs/policies.md#sap): retry x at
// 2^(3x) s after the first failure, 5 retries, then the subscription is
// deactivated and its events queued.
func SAP() Policy {
	return Policy{
		Name: NameSAP, Section: "docs/policies.md#sap",
		Description:   "SAP Open Connectors: retries 8 s, 64 s, 512 s, 4096 s, 32768 s after the first failure, then deactivate and queue",
		Schedule:      Schedule{Kind: Offsets, Durations: sapOffsets(5)},
		MaxAttempts:   6,
		Timeout:       30 * time.Second,
		DeadLettering: false, OnExhausted: DeactivateAndQueue,
		Health:        NoHealth,
		RetryAfterMax: time.Hour,
	}
}

// EventGrid is Azure Event Grid (docs/policies.md#eventgrid): gaps of 10 s, 30 s,
// 1 min, 5 min, 10 min, 30 min, 1 h, then hourly, each with ±10% jitter; 30
// attempts or 24 h; 400 and 413 dead-lettered at once; dead-lettering off by
// default (the event is then dropped, with a record). Success is 200-204, as
// Azure's reference counts it; the breaker disables after 10 consecutive
// failures and never freezes.
func EventGrid() Policy {
	return Policy{
		Name: NameEventGrid, Section: "docs/policies.md#eventgrid",
		Description: "Azure Event Grid: 10s, 30s, 1m, 5m, 10m, 30m, 1h, then hourly; 30 attempts or 24 h",
		Schedule: Schedule{Kind: Gaps, RepeatLast: true, Durations: []time.Duration{
			10 * time.Second, 30 * time.Second, time.Minute, 5 * time.Minute,
			10 * time.Minute, 30 * time.Minute, time.Hour,
		}},
		MaxAttempts:     30,
		TTL:             1440 * time.Minute,
		Timeout:         30 * time.Second,
		JitterFraction:  0.1,
		SuccessCodes:    eventGridSuccess,
		DeadLetterCodes: []int{400, 413},
		DeadLettering:   false, OnExhausted: DeadLetter,
		Health:        EventGridHealth,
		RetryAfterMax: time.Hour,
		LateAnswer:    3 * time.Minute,
	}
}

// EventGridEdge is Event Grid on IoT Edge (docs/policies.md#eventgrid-edge): one
// minute after the first failure, ten minutes after each later one; 30
// attempts or 7,200 s; then a dead letter (the original drops it).
func EventGridEdge() Policy {
	return Policy{
		Name: NameEventGridEdge, Section: "docs/policies.md#eventgrid-edge",
		Description: "Event Grid on IoT Edge: 1 min, then every 10 min; 30 attempts or 7200 s",
		Schedule: Schedule{Kind: Gaps, RepeatLast: true, Durations: []time.Duration{
			time.Minute, 10 * time.Minute,
		}},
		MaxAttempts:   30,
		TTL:           7200 * time.Second,
		Timeout:       60 * time.Second,
		SuccessCodes:  eventGridSuccess,
		DeadLettering: true, OnExhausted: DeadLetter,
		Health:        NoHealth,
		RetryAfterMax: 10 * time.Minute,
	}
}

// workfrontOffsets returns the offsets of retries 1..n, (2^k - 1) * 84.8 s
// (docs/policies.md#workfront), stopping early at the first beyond maxWait.
func workfrontOffsets(n int) []time.Duration {
	return formulaOffsets(n, func(k int) float64 {
		return (math.Ldexp(1, k) - 1) * float64(workfrontStep)
	})
}

// sapOffsets returns the offsets of retries 1..n, 2^(3x) s (docs/policies.md#sap),
// stopping early at the first beyond maxWait.
func sapOffsets(n int) []time.Duration {
	return formulaOffsets(n, func(x int) float64 {
		return math.Ldexp(1, 3*x) * float64(time.Second)
	})
}

// formulaOffsets evaluates f (in nanoseconds) for k = 1..n while it fits maxWait.
func formulaOffsets(n int, f func(k int) float64) []time.Duration {
	offsets := make([]time.Duration, 0, n)
	for k := 1; k <= n; k++ {
		d := f(k)
		if d > float64(maxWait) {
			break
		}
		offsets = append(offsets, time.Duration(d))
	}
	return offsets
}

// eventGridSuccess are the codes Azure's reference counts as success
// (docs/policies.md#eventgrid: 200-204), for eventgrid and eventgrid-edge.
var eventGridSuccess = []int{200, 201, 202, 203, 204}

var builtins = map[string]func() Policy{
	NameWorkfront:       Workfront,
	NameWorkfrontLegacy: WorkfrontLegacy,
	NameSAP:             SAP,
	NameEventGrid:       EventGrid,
	NameEventGridEdge:   EventGridEdge,
}

// Lookup returns the built-in policy with this name.
func Lookup(name string) (Policy, error) {
	f, ok := builtins[name]
	if !ok {
		return Policy{}, fmt.Errorf("%w: %q (known: %v)", ErrUnknown, name, Names())
	}
	return f(), nil
}

// Names lists the built-in policies, sorted.
func Names() []string {
	names := make([]string, 0, len(builtins))
	for n := range builtins {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
