package workflows

import "testing"

// TestDeliveryRunVersion: the input's version from versionInInput on, the
// local-bookkeeping marker's before it, 0 with neither.
func TestDeliveryRunVersion(t *testing.T) {
	for _, c := range []struct {
		input   int
		changes []string
		want    int
		known   bool
	}{
		{DeliveryVersion, []string{"no-catch-up-1"}, DeliveryVersion, false},
		{versionInInput, nil, versionInInput, false},
		{0, []string{"local-bookkeeping-3", "no-catch-up-1"}, 3, true},
		{0, []string{"local-bookkeeping-1"}, 1, true},
		{0, nil, 0, false},
		{0, []string{"receiver-protection-1"}, 0, false},
	} {
		if got := DeliveryRunVersion(c.input, c.changes); got != c.want {
			t.Errorf("DeliveryRunVersion(%d, %v) = %d, want %d", c.input, c.changes, got, c.want)
		}
		if got := DeliveryVersionFromChanges(c.changes); got != c.known {
			t.Errorf("DeliveryVersionFromChanges(%v) = %v", c.changes, got)
		}
	}
}
