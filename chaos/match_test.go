package chaos

import (
	"testing"
	"time"
)

// TestMatch checks the reconciliation of rows to requests delivery by
// delivery: the only difference accepted is an unknown row with no request
// behind it, opened just before a fault.
func TestMatch(t *testing.T) {
	fault := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	faults := &Faults{at: []time.Time{fault}}
	justBefore, long := fault.Add(-20*time.Millisecond), fault.Add(-time.Minute)
	cases := []struct {
		name      string
		d         deliveryRows
		requests  int
		cut       int
		unmatched bool
	}{
		{"one row per request", deliveryRows{Rows: 3}, 3, 0, false},
		{"an unknown row with its request", deliveryRows{Rows: 2, Unknown: []time.Time{justBefore}}, 2, 0, false},
		{"cut off at the fault", deliveryRows{Rows: 2, Unknown: []time.Time{justBefore}}, 1, 1, false},
		{"unknown, but open long before the fault", deliveryRows{Rows: 2, Unknown: []time.Time{long}}, 1, 0, true},
		{"unknown, opened after the fault", deliveryRows{Rows: 2, Unknown: []time.Time{fault.Add(2 * cutAfter)}}, 1, 0, true},
		{"an extra row that is not unknown", deliveryRows{Rows: 2}, 1, 0, true},
		{"more extra rows than cut off", deliveryRows{Rows: 3, Unknown: []time.Time{justBefore}}, 1, 0, true},
		{"a request without its row", deliveryRows{Rows: 1}, 2, 0, true},
		{"requests but no row", deliveryRows{}, 1, 0, true},
	}
	for _, c := range cases {
		c.d.ID = "dlv_1"
		cut, unmatched := match([]deliveryRows{c.d}, func(string) int { return c.requests }, faults)
		if cut != c.cut || (len(unmatched) > 0) != c.unmatched {
			t.Errorf("%s: cut %d, unmatched %q; want cut %d, unmatched %v", c.name, cut, unmatched, c.cut, c.unmatched)
		}
	}
	if cut, unmatched := match([]deliveryRows{{ID: "dlv_1", Rows: 2, Unknown: []time.Time{justBefore}}},
		func(string) int { return 1 }, &Faults{}); cut != 0 || len(unmatched) != 1 {
		t.Errorf("no fault: cut %d, unmatched %q; want the row unmatched", cut, unmatched)
	}
}
