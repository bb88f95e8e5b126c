package workflows_test

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv/durations"
)

// TestSAPSuccessAfterFailure: docs/policies.md#sap, retry mode. The first retry
// comes 2^3 = 8 s after the failed original; its success delivers the event
// and the subscription stays active.
func TestSAPSuccessAfterFailure(t *testing.T) {
	t.Parallel()
	f := newFixture(t, policies.NameSAP, "", failFirst(1, http.StatusInternalServerError))
	out := f.run(t)
	f.check(t, out, want{status: "delivered", attempts: 2, timers: durations.List(8)})
	if !f.active(t) {
		t.Error("subscription deactivated after a successful delivery")
	}
}

// TestSAPExhaustedDeactivatesAndQueues: docs/policies.md#sap. Retry x at 2^(3x)
// s after the original failure (offsets 8, 64, 512, 4096, 32768 s: timers 8,
// 56, 448, 3584, 28672 s); when all five fail the subscription is
// deactivated and the event queued, and later events for it are queued at
// once without a request.
func TestSAPExhaustedDeactivatesAndQueues(t *testing.T) {
	t.Parallel()
	f := newFixture(t, policies.NameSAP, "", always(http.StatusServiceUnavailable))
	out := f.run(t)
	f.check(t, out, want{status: "queued", attempts: 6, reason: string(policies.MaxAttemptsExceeded),
		timers: durations.List(8, 56, 448, 3584, 28672)})
	if got, want := f.scheduledOffsets(t), durations.List(0, 8, 64, 512, 4096, 32768); !slices.Equal(got, want) {
		t.Errorf("scheduled_at offsets = %v, want %v", got, want)
	}
	if f.active(t) {
		t.Fatal("subscription still active after every retry failed")
	}
	pub, err := f.st.Publish(context.Background(), store.Event{AccountID: account, Type: f.eventType})
	if err != nil {
		t.Fatal(err)
	}
	if len(pub.Deliveries) != 1 || pub.Deliveries[0].Status != "queued" {
		t.Errorf("later event's deliveries = %+v, want one queued", pub.Deliveries)
	}
}

// TestSAPMoreRetries: docs/policies.md#sap: "the default is 5 retries,
// configurable". max_attempts 8 extends the 2^(3x) formula to 7 retries.
func TestSAPMoreRetries(t *testing.T) {
	t.Parallel()
	f := newFixture(t, policies.NameSAP, `{"max_attempts": 8}`, always(http.StatusBadGateway))
	out := f.run(t)
	f.check(t, out, want{status: "queued", attempts: 8, reason: string(policies.MaxAttemptsExceeded),
		timers: durations.List(8, 56, 448, 3584, 28672, 229376, 1835008)})
	last := f.scheduledOffsets(t)[7]
	if last != 1<<21*time.Second {
		t.Errorf("retry 7 at %v, want 2^21 s", last)
	}
}

// TestSAPDeadLetterCodeQueues: docs/policies.md#sap: "a status code that a
// subscription sends straight to the end (dead_letter_codes) also ends the
// SAP way: queued, subscription deactivated" (issue 11, item 7), not
// dropped.
func TestSAPDeadLetterCodeQueues(t *testing.T) {
	t.Parallel()
	f := newFixture(t, policies.NameSAP, `{"dead_letter_codes": [422]}`, always(http.StatusUnprocessableEntity))
	out := f.run(t)
	f.check(t, out, want{status: "queued", attempts: 1, reason: "Undeliverable: HTTP 422"})
	if f.active(t) {
		t.Fatal("subscription still active after a dead-letter code under sap")
	}
}
