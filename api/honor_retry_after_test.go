package api

import (
	"net/http"
	"testing"
)

// TestHonorRetryAfterValidated: issue 53,
// docs/policies.md#retry-after-and-the-schedules. retry_policy.honor_retry_after
// takes true or false; anything else is a 400 naming the field.
func TestHonorRetryAfterValidated(t *testing.T) {
	t.Parallel()
	e := testAPI(t, testenvStore(t), nil)
	for _, v := range []string{"false", "true"} {
		body := `{"url":"https://receiver.example/hook","event_types":["a"],"policy":"workfront",` +
			`"retry_policy":{"honor_retry_after":` + v + `}}`
		code, sub := call(t, e, http.MethodPost, "/v1/subscriptions", body)
		rp, _ := sub["retry_policy"].(map[string]any)
		if code != http.StatusCreated || rp["honor_retry_after"] != (v == "true") {
			t.Errorf("honor_retry_after %s: %d %v", v, code, sub)
		}
	}
	body := `{"url":"https://receiver.example/hook","event_types":["a"],"retry_policy":{"honor_retry_after":"no"}}`
	code, res := call(t, e, http.MethodPost, "/v1/subscriptions", body)
	errObj, _ := res["error"].(map[string]any)
	if code != http.StatusBadRequest || errObj["field"] != "retry_policy.honor_retry_after" {
		t.Errorf("honor_retry_after \"no\": %d %v, want 400 naming retry_policy.honor_retry_after", code, res)
	}
}
