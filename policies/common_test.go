package policies

import (
	"testing"
	"time"
)

// failing is a snapshot of an endpoint that has failed n times in a row and
// every time in its window, never succeeding for 100 hours.
func failing(n int64) Snapshot {
	now := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	return Snapshot{State: StateEnabled, WindowAttempts: n, WindowFailures: n, Consecutive: n,
		LastSuccessAt: now.Add(-100 * time.Hour), Now: now}
}

// TestBreakerPerPolicy:
// docs/policies.md#which-policies-have-a-breaker-by-default and
// docs/policies.md#410-gone: workfront disables and freezes; eventgrid disables
// after 10 consecutive failures and never freezes (docs/policies.md#eventgrid);
// workfront-legacy, sap, eventgrid-edge and custom have none; only custom
// disables on 410.
func TestBreakerPerPolicy(t *testing.T) {
	t.Parallel()
	custom, err := Custom{Kind: Fixed, IntervalSeconds: 1}.Policy()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		p                  Policy
		at9, at10, at60000 string
		gone               bool
	}{
		{Workfront(), StateEnabled, StateEnabled, StateFrozen, false},
		{EventGrid(), StateEnabled, StateDisabled, StateDisabled, false},
		{WorkfrontLegacy(), StateEnabled, StateEnabled, StateEnabled, false},
		{SAP(), StateEnabled, StateEnabled, StateEnabled, false},
		{EventGridEdge(), StateEnabled, StateEnabled, StateEnabled, false},
		{custom, StateEnabled, StateEnabled, StateEnabled, true},
	}
	for _, c := range cases {
		for n, want := range map[int64]string{9: c.at9, 10: c.at10, 60000: c.at60000} {
			if got, _ := c.p.Health.Decide(failing(n)); got != want {
				t.Errorf("%s after %d failures: %s, want %s", c.p.Name, n, got, want)
			}
		}
		disabled := failing(60000)
		disabled.State = StateDisabled
		if got, _ := c.p.Health.Decide(disabled); c.p.Name == NameEventGrid && got != StateDisabled {
			t.Errorf("eventgrid, disabled, 60000 failures: %s, want never frozen", got)
		}
		if c.p.Health.DisableOnGone != c.gone {
			t.Errorf("%s: 410 disables = %v, want %v", c.p.Name, c.p.Health.DisableOnGone, c.gone)
		}
	}
}

// TestZeroTurnsRulesOff: docs/policies.md#common-rules and
// docs/endpoints.md#endpoint-health-circuit-breaker ("A zero turns its rule
// off"): each health field at zero switches off the rule it belongs to.
func TestZeroTurnsRulesOff(t *testing.T) {
	t.Parallel()
	rate := Snapshot{State: StateEnabled, WindowAttempts: 2, WindowFailures: 2, Consecutive: 2,
		LastSuccessAt: time.Unix(0, 0), Now: time.Unix(0, 0).Add(time.Minute)}
	streak := failing(5)
	cases := []struct {
		field string
		zero  func(*Health)
		s     Snapshot
	}{
		{"disable_min_attempts", func(h *Health) { h.DisableMinAttempts = 0 }, rate},
		{"disable_failure_rate", func(h *Health) { h.DisableFailureRate = 0 }, rate},
		{"window_seconds", func(h *Health) { h.Window = 0 }, rate},
		{"disable_consecutive", func(h *Health) { h.DisableConsecutive = 0 }, streak},
		{"freeze_consecutive", func(h *Health) { h.FreezeConsecutive = 0 }, streak},
		{"freeze_no_success_for_seconds", func(h *Health) { h.FreezeNoSuccessFor = 0 }, streak},
		{"freeze_always_after", func(h *Health) { h.FreezeAlwaysAfter = 0 }, streak},
	}
	for _, c := range cases {
		// Only the rule under test is on, set to fire on s (checked below).
		only := map[string]Health{
			"disable_min_attempts":          {Window: time.Hour, DisableMinAttempts: 0, DisableFailureRate: 0.5},
			"disable_failure_rate":          {Window: time.Hour, DisableMinAttempts: 1, DisableFailureRate: 0.5},
			"window_seconds":                {Window: time.Hour, DisableMinAttempts: 1, DisableFailureRate: 0.5},
			"disable_consecutive":           {DisableConsecutive: 3},
			"freeze_consecutive":            {FreezeConsecutive: 2, FreezeNoSuccessFor: time.Hour},
			"freeze_no_success_for_seconds": {FreezeConsecutive: 2, FreezeNoSuccessFor: time.Hour},
			"freeze_always_after":           {FreezeAlwaysAfter: 4},
		}[c.field]
		if c.field != "disable_min_attempts" {
			if got, _ := only.Decide(c.s); got == StateEnabled {
				t.Errorf("%s: the rule does not fire even when set", c.field)
			}
		}
		c.zero(&only)
		if got, reason := only.Decide(c.s); got != StateEnabled {
			t.Errorf("%s = 0: %s (%s), want the rule off", c.field, got, reason)
		}
	}
}

// TestSuccessCodesPerPolicy: docs/policies.md#eventgrid (200-204 for eventgrid
// and eventgrid-edge), docs/policies.md#workfront-legacy (200 only); workfront
// and sap take any 2xx.
func TestSuccessCodesPerPolicy(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		p        Policy
		ok, fail []int
	}{
		{EventGrid(), []int{200, 201, 202, 203, 204}, []int{205, 206, 299, 302}},
		{EventGridEdge(), []int{200, 204}, []int{205, 299}},
		{WorkfrontLegacy(), []int{200}, []int{201, 202, 204}},
		{Workfront(), []int{200, 204, 299}, []int{300}},
		{SAP(), []int{200, 299}, []int{300}},
	} {
		for _, code := range c.ok {
			if !IsSuccessCode(c.p.SuccessCodes, code) {
				t.Errorf("%s: %d is not success", c.p.Name, code)
			}
		}
		for _, code := range c.fail {
			if IsSuccessCode(c.p.SuccessCodes, code) {
				t.Errorf("%s: %d is success", c.p.Name, code)
			}
		}
	}
}

// TestEndingsPerPolicy: docs/policies.md#sap: a dead-letter code under sap ends
// the SAP way (queued, its subscription deactivated), not dropped;
// docs/policies.md#workfront: a waiting delivery that reaches the 48-hour
// window says so, not TimeToLiveExceeded (Workfront has no TTL).
func TestEndingsPerPolicy(t *testing.T) {
	t.Parallel()
	eg := EventGrid()
	egDL := eg
	egDL.DeadLettering = true
	for _, c := range []struct {
		p    Policy
		want Status
	}{{SAP(), StatusQueued}, {eg, StatusDropped}, {egDL, StatusDeadLettered}, {Workfront(), StatusDeadLettered}} {
		if got := c.p.UndeliverableStatus(); got != c.want {
			t.Errorf("%s: undeliverable ends %s, want %s", c.p.Name, got, c.want)
		}
	}
	if !DeactivatesSubscription(SAP().UndeliverableStatus(), SAP().OnExhausted) {
		t.Error("sap: an undeliverable code does not deactivate the subscription")
	}
	if Workfront().DeadlineStop() != RetryWindowExceeded || EventGrid().DeadlineStop() != TTLExceeded {
		t.Errorf("deadline stops: workfront %s, eventgrid %s", Workfront().DeadlineStop(), EventGrid().DeadlineStop())
	}
}

// TestZeroOverridesAccepted: every health field of retry_policy.health takes 0
// (docs/policies.md#common-rules), and an endpoint with all of them at 0 is
// never disabled or frozen, nor probed.
func TestZeroOverridesAccepted(t *testing.T) {
	t.Parallel()
	zero, rate := 0, 0.0
	o := Overrides{Health: &HealthOverrides{WindowSeconds: &zero, DisableMinAttempts: &zero, DisableFailureRate: &rate,
		DisableConsecutive: &zero, FreezeConsecutive: &zero, FreezeNoSuccessForSeconds: &zero, FreezeAlwaysAfter: &zero,
		ProbeIntervalSeconds: &zero}}
	p, err := Resolve(NameWorkfront, o)
	if err != nil {
		t.Fatalf("all zero: %v", err)
	}
	if got, reason := p.Health.Decide(failing(1_000_000)); got != StateEnabled || p.Health.ProbeInterval != 0 {
		t.Fatalf("all rules at 0: %s (%s), probe every %v", got, reason, p.Health.ProbeInterval)
	}
	thirty := 30
	if _, err := Resolve(NameWorkfront, Overrides{Health: &HealthOverrides{WindowSeconds: &thirty}}); err == nil {
		t.Fatal("window_seconds 30 accepted: the window counts whole minutes")
	}
}
