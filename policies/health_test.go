package policies

import (
	"errors"
	"testing"
	"time"
)

// TestDecideThresholds checks every Workfront rule (docs/policies.md#workfront) at
// its exact threshold and one step on either side.
func TestDecideThresholds(t *testing.T) {
	t.Parallel()
	now := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	recent := now.Add(-time.Hour)
	h := WorkfrontHealth
	cases := []struct {
		name string
		s    Snapshot
		want string
	}{
		{"100 attempts all failed: not over 100", Snapshot{State: StateEnabled, WindowAttempts: 100, WindowFailures: 100, LastSuccessAt: recent}, StateEnabled},
		{"101 attempts all failed", Snapshot{State: StateEnabled, WindowAttempts: 101, WindowFailures: 101, LastSuccessAt: recent}, StateDisabled},
		{"70% of 200: not over 70%", Snapshot{State: StateEnabled, WindowAttempts: 200, WindowFailures: 140, LastSuccessAt: recent}, StateEnabled},
		{"71% of 200", Snapshot{State: StateEnabled, WindowAttempts: 200, WindowFailures: 142, LastSuccessAt: recent}, StateDisabled},
		{"70% of 1000", Snapshot{State: StateEnabled, WindowAttempts: 1000, WindowFailures: 700, LastSuccessAt: recent}, StateEnabled},
		{"70.1% of 1000", Snapshot{State: StateEnabled, WindowAttempts: 1000, WindowFailures: 701, LastSuccessAt: recent}, StateDisabled},
		{"1,999 consecutive", Snapshot{State: StateEnabled, Consecutive: 1999, LastSuccessAt: recent}, StateEnabled},
		{"2,000 consecutive", Snapshot{State: StateEnabled, Consecutive: 2000, LastSuccessAt: recent}, StateDisabled},
		{"2,001 consecutive, success 1 h ago", Snapshot{State: StateEnabled, Consecutive: 2001, LastSuccessAt: recent}, StateDisabled},
		{"2,000 consecutive, success 73 h ago: not over 2,000", Snapshot{State: StateDisabled, Consecutive: 2000, LastSuccessAt: now.Add(-73 * time.Hour)}, StateDisabled},
		{"2,001 consecutive, success 71 h ago", Snapshot{State: StateDisabled, Consecutive: 2001, LastSuccessAt: now.Add(-71 * time.Hour)}, StateDisabled},
		{"2,001 consecutive, success exactly 72 h ago", Snapshot{State: StateDisabled, Consecutive: 2001, LastSuccessAt: now.Add(-72 * time.Hour)}, StateDisabled},
		{"2,001 consecutive, success 73 h ago", Snapshot{State: StateDisabled, Consecutive: 2001, LastSuccessAt: now.Add(-73 * time.Hour)}, StateFrozen},
		{"2,001 consecutive, success 73 h ago, from enabled", Snapshot{State: StateEnabled, Consecutive: 2001, LastSuccessAt: now.Add(-73 * time.Hour)}, StateFrozen},
		{"2,001 consecutive, never a success", Snapshot{State: StateDisabled, Consecutive: 2001}, StateFrozen},
		{"49,999 consecutive, recent success", Snapshot{State: StateDisabled, Consecutive: 49999, LastSuccessAt: recent}, StateDisabled},
		{"50,000 consecutive, recent success", Snapshot{State: StateDisabled, Consecutive: 50000, LastSuccessAt: recent}, StateFrozen},
		{"frozen stays frozen", Snapshot{State: StateFrozen}, StateFrozen},
		{"disabled is never re-enabled by counters", Snapshot{State: StateDisabled, LastSuccessAt: now}, StateDisabled},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.s.Now = now
			got, reason := h.Decide(c.s)
			if got != c.want {
				t.Fatalf("Decide = %s (%q), want %s", got, reason, c.want)
			}
			if (got != c.s.State) != (reason != "") {
				t.Fatalf("reason %q for %s -> %s", reason, c.s.State, got)
			}
		})
	}
}

func TestDecideZeroTurnsRulesOff(t *testing.T) {
	t.Parallel()
	s := Snapshot{State: StateEnabled, WindowAttempts: 1e6, WindowFailures: 1e6, Consecutive: 1e6, Now: time.Now()}
	if got, _ := (Health{}).Decide(s); got != StateEnabled {
		t.Fatalf("zero Health decided %s", got)
	}
}

func TestHealthOverrides(t *testing.T) {
	t.Parallel()
	three, two, bad := 3, 2, -1 // 0 turns probes off (docs/policies.md#common-rules)
	p, err := Resolve(NameWorkfront, Overrides{Health: &HealthOverrides{DisableConsecutive: &three, ProbeIntervalSeconds: &two}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Health.DisableConsecutive != 3 || p.Health.ProbeInterval != 2*time.Second || p.Health.FreezeAlwaysAfter != 50000 {
		t.Fatalf("health = %+v", p.Health)
	}
	_, err = Resolve(NameWorkfront, Overrides{Health: &HealthOverrides{ProbeIntervalSeconds: &bad}})
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "retry_policy.health.probe_interval_seconds" {
		t.Fatalf("err = %v", err)
	}
	rate := 1.5
	_, err = Resolve(NameSAP, Overrides{Health: &HealthOverrides{DisableFailureRate: &rate}})
	if !errors.As(err, &fe) || fe.Field != "retry_policy.health.disable_failure_rate" {
		t.Fatalf("err = %v", err)
	}
}

// TestMayAttempt: attempts go to an enabled endpoint, probes to a disabled
// one too, nothing to a frozen one (docs/policies.md#workfront).
func TestMayAttempt(t *testing.T) {
	t.Parallel()
	cases := []struct {
		state string
		probe bool
		want  bool
	}{
		{StateEnabled, false, true}, {StateEnabled, true, true},
		{StateDisabled, false, false}, {StateDisabled, true, true},
		{StateFrozen, false, false}, {StateFrozen, true, false},
	}
	for _, c := range cases {
		if got := MayAttempt(c.state, c.probe); got != c.want {
			t.Errorf("MayAttempt(%s, probe=%v) = %v, want %v", c.state, c.probe, got, c.want)
		}
	}
}
