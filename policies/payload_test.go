package policies

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestPolicyPayload: a policy's JSON is what a delivery's workflow input
// carries in every history. It leaves out zero fields and reads back as the
// same policy, for every built-in policy and one without a breaker.
func TestPolicyPayload(t *testing.T) {
	ps := []Policy{{Name: "bare", Schedule: Schedule{Kind: Gaps, Durations: []time.Duration{time.Second}}}}
	for _, name := range Names() {
		p, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	for _, p := range ps {
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, zero := range []string{`:0,`, `:0}`, `:false`, `:""`, `:{}`} {
			if strings.Contains(string(b), zero) {
				t.Errorf("%s: %s has a zero field (%s)", p.Name, b, zero)
			}
		}
		var back Policy
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, p) {
			t.Errorf("%s: read back as %+v, want %+v", p.Name, back, p)
		}
	}
}
