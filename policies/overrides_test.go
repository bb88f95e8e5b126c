package policies

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/testenv/durations"
)

// TestResolveRejects: every out-of-range override is a *FieldError on its
// JSON path.
func TestResolveRejects(t *testing.T) {
	t.Parallel()
	cases := []struct {
		cite, name string
		o          Overrides
		field      string
	}{
		{"§eventgrid maxDeliveryAttempts 1-30", NameEventGrid, Overrides{MaxAttempts: ptr(0)}, "retry_policy.max_attempts"},
		{"§eventgrid maxDeliveryAttempts 1-30", NameEventGrid, Overrides{MaxAttempts: ptr(31)}, "retry_policy.max_attempts"},
		{"§eventgrid limits, §eventgrid-edge retryPolicy", NameEventGridEdge, Overrides{MaxAttempts: ptr(31)}, "retry_policy.max_attempts"},
		{"§eventgrid eventTimeToLiveInMinutes 1-1440", NameEventGrid, Overrides{TTLSeconds: ptr(59)}, "retry_policy.ttl_seconds"},
		{"§eventgrid eventTimeToLiveInMinutes 1-1440", NameEventGrid, Overrides{TTLSeconds: ptr(86401)}, "retry_policy.ttl_seconds"},
		{"§eventgrid limits, §eventgrid-edge retryPolicy", NameEventGridEdge, Overrides{TTLSeconds: ptr(59)}, "retry_policy.ttl_seconds"},
		{"§Custom policies: max attempts", NameWorkfrontLegacy, Overrides{MaxAttempts: ptr(101)}, "retry_policy.max_attempts"},
		{"§Custom policies: time-to-live", NameWorkfront, Overrides{TTLSeconds: ptr(0)}, "retry_policy.ttl_seconds"},
		{"§Custom policies: timeout", NameSAP, Overrides{TimeoutSeconds: ptr(0)}, "retry_policy.timeout_seconds"},
		{"§Custom policies: timeout", NameSAP, Overrides{TimeoutSeconds: ptr(301)}, "retry_policy.timeout_seconds"},
		{"§Custom policies: jitter", NameSAP, Overrides{JitterFraction: ptr(-0.1)}, "retry_policy.jitter_fraction"},
		{"§Custom policies: jitter", NameSAP, Overrides{JitterFraction: ptr(0.51)}, "retry_policy.jitter_fraction"},
		{"§Custom policies: jitter", NameSAP, Overrides{JitterFraction: ptr(math.NaN())}, "retry_policy.jitter_fraction"},
		{"§Custom policies: success codes", NameSAP, Overrides{SuccessCodes: []int{200, 99}}, "retry_policy.success_codes[1]"},
		{"§Custom policies: dead-letter codes", NameSAP, Overrides{DeadLetterCodes: []int{600}}, "retry_policy.dead_letter_codes[0]"},
		{"top: any 2xx is success, so 204 cannot dead-letter", NameEventGrid, Overrides{DeadLetterCodes: []int{400, 204}}, "retry_policy.dead_letter_codes[1]"},
		{"§Custom policies: what happens when retries run out", NameSAP, Overrides{OnExhausted: ptr(Exhausted("explode"))}, "retry_policy.on_exhausted"},
		{"§eventgrid: dead-lettering is a switch", NameEventGrid, Overrides{OnExhausted: ptr(DeadLetter), DeadLettering: ptr(false)}, "retry_policy.dead_lettering"},
		{"§sap: 2^(3x) s; retry 11 would be 272 years away", NameSAP, Overrides{MaxAttempts: ptr(12)}, "retry_policy.max_attempts"},
		{"§Custom policies: the list has 2 offsets", NameCustom, Overrides{MaxAttempts: ptr(4), Custom: &Custom{Kind: Offsets, Seconds: []float64{1, 2}}}, "retry_policy.max_attempts"},
		{"§Custom policies: custom needs a schedule", NameCustom, Overrides{}, "retry_policy.custom"},
		{"§Custom policies: only custom takes a schedule", NameWorkfront, Overrides{Custom: &Custom{Kind: Fixed, IntervalSeconds: 1}}, "retry_policy.custom"},
	}
	for _, c := range cases {
		_, err := Resolve(c.name, c.o)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("docs/policies.md %s: Resolve(%q) = %v, want a FieldError on %s", c.cite, c.name, err, c.field)
		}
		if err != nil && c.o.Validate(c.name) == nil {
			t.Errorf("docs/policies.md %s: Validate accepts what Resolve rejects", c.cite)
		}
	}
}

// TestResolveAccepts: the limits themselves are valid and applied.
func TestResolveAccepts(t *testing.T) {
	t.Parallel()
	eg := mustResolve(t, NameEventGrid, Overrides{MaxAttempts: ptr(30), TTLSeconds: ptr(60)})
	if eg.MaxAttempts != 30 || eg.TTL != time.Minute {
		t.Errorf("docs/policies.md#eventgrid: 30 attempts and 1 minute accepted, got %d %v", eg.MaxAttempts, eg.TTL)
	}
	eg = mustResolve(t, NameEventGrid, Overrides{MaxAttempts: ptr(1), TTLSeconds: ptr(86400), TimeoutSeconds: ptr(300), JitterFraction: ptr(0.5)})
	if eg.MaxAttempts != 1 || eg.TTL != 24*time.Hour || eg.Timeout != 5*time.Minute || eg.JitterFraction != 0.5 {
		t.Errorf("docs/policies.md#eventgrid: limits accepted, got %+v", eg)
	}
	edge := mustResolve(t, NameEventGridEdge, Overrides{TTLSeconds: ptr(86400), MaxAttempts: ptr(30)})
	if rows := edge.Rows(); len(rows) != 30 {
		t.Errorf("docs/policies.md#eventgrid-edge: with a 24 h TTL all 30 attempts fit, got %d", len(rows))
	}
	legacy := mustResolve(t, NameWorkfrontLegacy, Overrides{MaxAttempts: ptr(100)})
	if legacy.MaxAttempts != 100 {
		t.Errorf("docs/policies.md#custom-policies: max_attempts 100, got %d", legacy.MaxAttempts)
	}
}

// TestResolveExtendsFormulas: SAP's "9 attempts" reading is available as an
// override, and retry 9 then comes after about 4 years (docs/policies.md#sap).
func TestResolveExtendsFormulas(t *testing.T) {
	t.Parallel()
	sap := mustResolve(t, NameSAP, Overrides{MaxAttempts: ptr(10)})
	offsets, stop := simulate(t, sap, 0)
	want := durations.List(8, 64, 512, 4096, 32768, 262144, 2097152, 16777216, 134217728)
	if !slices.Equal(offsets, want) || stop != MaxAttemptsExceeded {
		t.Errorf("docs/policies.md#sap: got %v %q, want %v", offsets, stop, want)
	}
	if years := offsets[8].Hours() / 24 / 365; years < 4 || years > 4.5 {
		t.Errorf("docs/policies.md#sap: a 9th retry after about 4 years, got %.2f", years)
	}
	wf := mustResolve(t, NameWorkfront, Overrides{MaxAttempts: ptr(13)})
	if offsets, _ := simulate(t, wf, 0); len(offsets) != 12 || offsets[11] != durations.Secs(4095*84.8) {
		t.Errorf("docs/policies.md#workfront: retry 12 at 4095 * 84.8 s, got %v", offsets)
	}
	if got := mustResolve(t, NameSAP, Overrides{MaxAttempts: ptr(3)}); len(got.Rows()) != 3 {
		t.Errorf("docs/policies.md#sap: 3 deliveries, got %d rows", len(got.Rows()))
	}
	if len(SAP().Schedule.Durations) != 5 {
		t.Errorf("docs/policies.md#sap: an override changed the builtin")
	}
}

// TestResolveOutcome: what happens when retries run out (docs/policies.md#custom-policies;
// docs/policies.md#eventgrid dead-lettering off by default).
func TestResolveOutcome(t *testing.T) {
	t.Parallel()
	cases := []struct {
		cite  string
		name  string
		o     Overrides
		final string
	}{
		{"§eventgrid: off by default, dropped", NameEventGrid, Overrides{}, "dropped"},
		{"§eventgrid: set per subscription", NameEventGrid, Overrides{DeadLettering: ptr(true)}, "dead_lettered"},
		{"§eventgrid: on_exhausted dead_letter turns it on", NameEventGrid, Overrides{OnExhausted: ptr(DeadLetter)}, "dead_lettered"},
		{"§Custom policies: drop with a record", NameWorkfront, Overrides{OnExhausted: ptr(Drop)}, "dropped"},
		{"§Custom policies: deactivate-and-queue", NameWorkfront, Overrides{OnExhausted: ptr(DeactivateAndQueue)}, "queued"},
		{"§sap: queued", NameSAP, Overrides{}, "queued"},
	}
	for _, c := range cases {
		if got := mustResolve(t, c.name, c.o).FinalStatus(); string(got) != c.final {
			t.Errorf("docs/policies.md %s: final status %q, want %q", c.cite, got, c.final)
		}
	}
}

// TestResolveCodes: code lists replace the policy's (docs/policies.md#custom-policies);
// an empty dead-letter list clears Event Grid's 400 and 413.
func TestResolveCodes(t *testing.T) {
	t.Parallel()
	eg := mustResolve(t, NameEventGrid, Overrides{DeadLetterCodes: []int{}})
	if eg.Classify(400) != Retry {
		t.Errorf("docs/policies.md#eventgrid: cleared dead-letter codes still dead-letter 400")
	}
	codes := []int{200}
	p := mustResolve(t, NameEventGrid, Overrides{SuccessCodes: codes, DeadLetterCodes: []int{204}})
	codes[0] = 500
	if p.Classify(200) != Delivered || p.Classify(204) != Undeliverable {
		t.Errorf("docs/policies.md#custom-policies: got %v / %v", p.Classify(200), p.Classify(204))
	}
	if EventGrid().Classify(400) != Undeliverable {
		t.Errorf("docs/policies.md#eventgrid: an override changed the builtin")
	}
}

// TestResolveUnknown: an unknown name is a FieldError on "policy" that is
// also ErrUnknown.
func TestResolveUnknown(t *testing.T) {
	t.Parallel()
	_, err := Resolve("pagerduty", Overrides{})
	var fe *FieldError
	if !errors.Is(err, ErrUnknown) || !errors.As(err, &fe) || fe.Field != "policy" {
		t.Fatalf("Resolve(pagerduty) = %v, want ErrUnknown as a FieldError on policy", err)
	}
	if fe.Error() == "" || fe.Message == "" {
		t.Errorf("empty message")
	}
}

// TestOverridesJSON decodes a subscription's retry_policy as the API gets it.
func TestOverridesJSON(t *testing.T) {
	t.Parallel()
	body := `{"max_attempts": 5, "ttl_seconds": 3600, "dead_lettering": true,
		"jitter_fraction": 0, "dead_letter_codes": [400, 410], "on_exhausted": "dead_letter"}`
	var o Overrides
	if err := json.Unmarshal([]byte(body), &o); err != nil {
		t.Fatal(err)
	}
	p := mustResolve(t, NameEventGrid, o)
	if p.MaxAttempts != 5 || p.TTL != time.Hour || p.JitterFraction != 0 || p.Classify(410) != Undeliverable || p.FinalStatus() != "dead_lettered" {
		t.Errorf("docs/policies.md#eventgrid retryPolicy: got %+v", p)
	}
	offsets, _ := simulate(t, p, 7)
	if want := durations.List(10, 40, 100, 400); !slices.Equal(offsets, want) {
		t.Errorf("docs/policies.md#eventgrid: 5 attempts without jitter, got %v want %v", offsets, want)
	}
}
