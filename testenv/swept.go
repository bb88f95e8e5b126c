package testenv

import (
	"context"
	"slices"
	"testing"

	"github.com/hookrelay/hookrelay/store"
)

// WantSwept fails the test unless the sweeper would start exactly these
// deliveries of st, in this order (store.UnstartedDeliveries, of any age).
func WantSwept(t testing.TB, st *store.Store, want ...string) {
	t.Helper()
	ds, err := st.UnstartedDeliveries(context.Background(), 0, 10)
	got := []string{}
	for _, d := range ds {
		got = append(got, d.ID)
	}
	if want == nil {
		want = []string{}
	}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("the sweeper gets %v (%v), want %v", got, err, want)
	}
}
