package eventgrid_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hookrelay/hookrelay/eventgrid"
	"github.com/hookrelay/hookrelay/policies"
)

// TestDeadLetterBlobName: upper-case subscription name, UTC date and hour not
// zero-padded, a UUID derived from the dead letter (the same name twice).
func TestDeadLetterBlobName(t *testing.T) {
	at := time.Date(2026, 3, 5, 9, 30, 0, 0, time.FixedZone("+02", 2*3600)) // 07:30 UTC
	a := eventgrid.DeadLetterBlobName("Orders-dl", at, "dl_1")
	if !strings.HasPrefix(a, "ORDERS-DL/2026/3/5/7/") || !strings.HasSuffix(a, ".json") || len(a) != len("ORDERS-DL/2026/3/5/7/")+36+5 {
		t.Errorf("name %q", a)
	}
	if b := eventgrid.DeadLetterBlobName("Orders-dl", at, "dl_1"); b != a {
		t.Errorf("same dead letter named %q and %q", a, b)
	}
	if c := eventgrid.DeadLetterBlobName("Orders-dl", at, "dl_2"); c == a {
		t.Errorf("two dead letters named %q", a)
	}
}

// TestDeadLetterBlobContent: the event as delivered plus the dead-letter
// properties, in a JSON array; lower-case names in the CloudEvents schema.
func TestDeadLetterBlobContent(t *testing.T) {
	ev := eventgrid.Outgoing{ID: "e1", Type: "order.created", Subject: "/o/1", Topic: "/t", Time: time.Unix(0, 0),
		Data: json.RawMessage(`{"n":1}`), DataVersion: "1"}
	r := eventgrid.DeadLetterRecord{Reason: "MaxDeliveryAttemptsExceeded", Attempts: 3, LastStatusCode: 404,
		PublishTime: time.Unix(1, 0), LastAttemptTime: time.Unix(2, 0)}
	for _, tc := range []struct {
		schema string
		want   []string
	}{
		{eventgrid.SchemaEventGrid, []string{"id", "eventType", "topic", "data", "deadLetterReason", "deliveryAttempts",
			"lastDeliveryOutcome", "lastHttpStatusCode", "publishTime", "lastDeliveryAttemptTime"}},
		{eventgrid.SchemaCloudEvents, []string{"id", "type", "source", "data", "deadletterreason", "deliveryattempts",
			"lastdeliveryoutcome", "lasthttpstatuscode", "publishtime", "lastdeliveryattempttime"}},
	} {
		body, err := eventgrid.DeadLetterBlob(ev, &eventgrid.Settings{Mode: eventgrid.ModeCloud, Schema: tc.schema}, r)
		if err != nil {
			t.Fatal(err)
		}
		var got []map[string]any
		if err := json.Unmarshal(body, &got); err != nil || len(got) != 1 {
			t.Fatalf("%s: %s is not an array of one (%v)", tc.schema, body, err)
		}
		for _, k := range tc.want {
			if _, ok := got[0][k]; !ok {
				t.Errorf("%s: no %s in %s", tc.schema, k, body)
			}
		}
		if got[0]["id"] != "e1" || got[0][tc.want[5]] != 3.0 || got[0][tc.want[6]] != "NotFound" || got[0][tc.want[7]] != 404.0 {
			t.Errorf("%s: %s, want event e1, 3 attempts, NotFound (404)", tc.schema, body)
		}
	}
}

// TestDeliveryOutcome names the last attempt's outcome as Event Grid does.
func TestDeliveryOutcome(t *testing.T) {
	for _, tc := range []struct {
		status int
		kind   string
		want   string
	}{
		{400, "http_status", "BadRequest"}, {404, "http_status", "NotFound"}, {401, "http_status", "Unauthorized"},
		{408, "http_status", "TimedOut"}, {0, "timeout", "TimedOut"}, {503, "http_status", "Busy"},
		{429, "http_status", "Busy"}, {0, "connection_refused", "GenericError"}, {500, "http_status", "InternalServerError"},
	} {
		if got := eventgrid.DeliveryOutcome(tc.status, tc.kind); got != tc.want {
			t.Errorf("DeliveryOutcome(%d, %q) = %q, want %q", tc.status, tc.kind, got, tc.want)
		}
	}
}

// TestBlobDestinationSpec: a StorageBlob destination with a resourceId must
// name a storage account and a valid container; it is kept in the settings.
func TestBlobDestinationSpec(t *testing.T) {
	const rid = "/subscriptions/s1/resourceGroups/rg/providers/Microsoft.Storage/storageAccounts/"
	for _, tc := range []struct {
		name, props, field string
	}{
		{"ok", `"resourceId":"` + rid + `acct1","blobContainerName":"dead-letters"`, ""},
		{"not an account", `"resourceId":"/subscriptions/s1/resourceGroups/rg","blobContainerName":"dl1"`, "resourceId"},
		{"bad account name", `"resourceId":"` + rid + `Acct_1","blobContainerName":"dl1"`, "resourceId"},
		{"no container", `"resourceId":"` + rid + `acct1"`, "blobContainerName"},
		{"bad container", `"resourceId":"` + rid + `acct1","blobContainerName":"a--b"`, "blobContainerName"},
		{"short container", `"resourceId":"` + rid + `acct1","blobContainerName":"ab"`, "blobContainerName"},
	} {
		var sub eventgrid.Subscription
		body := `{"properties":{"destination":{"endpointType":"WebHook","properties":{"endpointUrl":"https://x"}},` +
			`"deadLetterDestination":{"endpointType":"StorageBlob","properties":{` + tc.props + `}}}}`
		if err := json.Unmarshal([]byte(body), &sub); err != nil {
			t.Fatal(err)
		}
		sp, err := sub.Spec(eventgrid.ModeCloud, func(string, string) error { return nil })
		var fe *policies.FieldError
		switch {
		case tc.field == "" && (err != nil || sp.Settings.DeadLetterBlob == nil || sp.Settings.DeadLetterBlob.Account != "acct1"):
			t.Errorf("%s: %v, %+v", tc.name, err, sp.Settings.DeadLetterBlob)
		case tc.field != "" && (!errors.As(err, &fe) || fe.Field != "properties.deadLetterDestination.properties."+tc.field):
			t.Errorf("%s: %v, want a FieldError on %s", tc.name, err, tc.field)
		}
	}
}
