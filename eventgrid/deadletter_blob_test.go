package eventgrid_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/client"

	"github.com/hookrelay/hookrelay/activities"
	"github.com/hookrelay/hookrelay/api"
	"github.com/hookrelay/hookrelay/azstorage"
	"github.com/hookrelay/hookrelay/devenv"
	"github.com/hookrelay/hookrelay/metrics"
	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/testenv"
	"github.com/hookrelay/hookrelay/worker"
	"github.com/hookrelay/hookrelay/workflows"
)

// blobEnv is a store, a worker and the API, writing dead letters to an
// Azurite of the test's own after 1 s.
type blobEnv struct {
	st      *store.Store
	c       client.Client
	h       http.Handler
	azurite *devenv.Azurite
	acc     *azstorage.Accounts
	// stopWorker stops the worker newBlobEnv started.
	stopWorker func()
}

func newBlobEnv(t *testing.T) *blobEnv {
	t.Helper()
	e := &blobEnv{st: testenv.Store(t), c: testenv.Client(t), azurite: testenv.Azurite(t)}
	e.acc = testenv.StorageAccounts(t, e.azurite)
	e.stopWorker = e.startWorker(t)
	e.h = api.New(&api.Server{Store: e.st, Temporal: e.c, Logger: testenv.Logger(), Auth: api.Auth{Open: true},
		Egress: testenv.Egress(), Starter: testenv.Starter(t, e.c, e.st), Storage: e.acc})
	return e
}

// startWorker starts a worker on the test's queues, as `hookrelay worker`
// runs, until stop or the end of the test.
func (e *blobEnv) startWorker(t *testing.T) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stopWorker, err := worker.Start(ctx, e.c, e.st, testenv.Logger(), worker.Options{HTTPConcurrency: 5,
		QueuePrefix: testenv.QueuePrefix(t), Egress: testenv.Egress(),
		DeadLetterBlobs: &activities.DeadLetterBlobs{Accounts: e.acc, Delay: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); stopWorker() }) }
	t.Cleanup(stop)
	return stop
}

// blobDest is a deadLetterDestination writing to Azurite's container.
func blobDest(account, container, extra string) string {
	return `"deadLetterDestination":{"endpointType":"StorageBlob","properties":{"resourceId":` +
		`"/subscriptions/0000/resourceGroups/rg/providers/Microsoft.Storage/storageAccounts/` + account +
		`","blobContainerName":"` + container + `"` + extra + `}}`
}

// deadLetterOf waits for the subscription's one dead letter and its
// DeadLetterBlob workflow, and returns the dead letter's id.
func (e *blobEnv) deadLetterOf(t *testing.T, subID string) string {
	t.Helper()
	ctx := context.Background()
	var id string
	waitUntil(t, "a dead letter", func() bool {
		ls, err := e.st.ListDeadLetters(ctx, "acct_default", store.DeadLetterFilter{SubscriptionID: subID, Limit: 10})
		if err != nil || len(ls) == 0 {
			return false
		}
		id = ls[0].ID
		return true
	})
	waitUntil(t, "the DeadLetterBlob workflow", func() bool {
		_, err := e.c.DescribeWorkflowExecution(ctx, workflows.DeadLetterBlobWorkflowID(id), "")
		return err == nil
	})
	return id
}

// blobResult waits for the dead letter's DeadLetterBlob workflow to end.
func (e *blobEnv) blobResult(t *testing.T, dlID string) workflows.DeadLetterBlobResult {
	t.Helper()
	var res workflows.DeadLetterBlobResult
	if err := e.c.GetWorkflow(context.Background(), workflows.DeadLetterBlobWorkflowID(dlID), "").Get(context.Background(), &res); err != nil {
		t.Fatal(err)
	}
	return res
}

// blobs reads every blob of the container under prefix.
func (e *blobEnv) blobs(t *testing.T, container, prefix string) map[string][]byte {
	t.Helper()
	ctx, c := context.Background(), e.acc.Client(devenv.AzuriteAccount)
	out := map[string][]byte{}
	pager := c.NewListBlobsFlatPager(container, &azblob.ListBlobsFlatOptions{Prefix: &prefix})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range page.Segment.BlobItems {
			r, err := c.DownloadStream(ctx, container, *b.Name, nil)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(r.Body)
			r.Body.Close()
			out[*b.Name] = body
		}
	}
	return out
}

// waitUntil polls cond for up to 2 minutes.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s after 2 minutes", what)
		}
	}
}

// TestDeadLetterBlobWritten: a subscription named orders-dl whose receiver
// answers 400 gets one blob under deadletters/ORDERS-DL/<yyyy>/<M>/<d>/<H>/,
// a JSON array holding the event with the dead-letter properties; the dead
// letter stays in /v1/dead-letters; raiseEvent publishes the blob's
// Microsoft.Storage.BlobCreated event to a subscription of that type.
func TestDeadLetterBlobWritten(t *testing.T) {
	t.Parallel()
	e := newBlobEnv(t)
	bad, handler := newReceiver(t, always(http.StatusBadRequest)), newReceiver(t, always(http.StatusOK))
	sub := putSub(t, e.st, e.h, "orders-dl", "", `{`+webhook(bad.URL, `,"hookrelayPreValidated":true`)+`,`+
		`"filter":{"includedEventTypes":["order.created"]},`+blobDest(devenv.AzuriteAccount, "deadletters", `,"raiseEvent":true`)+`}`)
	putSub(t, e.st, e.h, "on-blob", "", `{`+webhook(handler.URL, `,"hookrelayPreValidated":true`)+`,`+
		`"filter":{"includedEventTypes":["Microsoft.Storage.BlobCreated"]}}`)
	if code, body := call(t, e.h, http.MethodPost, "/eventgrid/events", "application/json", egEvents("ord", "order.created", 1)); code != http.StatusOK {
		t.Fatalf("publish: %d %s", code, body)
	}
	dlID := e.deadLetterOf(t, sub.ID)
	res := e.blobResult(t, dlID)
	blobs := e.blobs(t, "deadletters", "ORDERS-DL/")
	if len(blobs) != 1 {
		t.Fatalf("blobs under deadletters/ORDERS-DL/: %d, want 1", len(blobs))
	}
	for name, body := range blobs {
		checkBlob(t, name, body)
		if !strings.HasSuffix(res.URL, "/deadletters/"+name) {
			t.Errorf("workflow result URL %q, want the blob %s", res.URL, name)
		}
	}
	if code, body := call(t, e.h, http.MethodGet, "/v1/dead-letters?subscription_id="+sub.ID, "", ""); code != http.StatusOK || !strings.Contains(body, dlID) {
		t.Errorf("/v1/dead-letters: %d %s, want %s listed", code, body, dlID)
	}
	waitUntil(t, "BlobCreated delivery", func() bool { return len(handler.requests()) > 0 })
	checkBlobCreated(t, handler.requests()[0].Events[0], res.URL)
}

// blobName is Azure's dead-letter blob name: the subscription's name in upper
// case, the UTC date and hour, not zero-padded, and a UUID.
var blobName = regexp.MustCompile(`^ORDERS-DL/\d{4}/([1-9]|1[0-2])/([1-9]|[12]\d|3[01])/([0-9]|1\d|2[0-3])/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.json$`)

// checkBlob checks a dead-letter blob's name and content.
func checkBlob(t *testing.T, name string, body []byte) {
	t.Helper()
	now := time.Now().UTC()
	if !blobName.MatchString(name) || !strings.HasPrefix(name, "ORDERS-DL/"+itoa(now.Year())+"/") {
		t.Errorf("blob name %q", name)
	}
	var evs []map[string]any
	if err := json.Unmarshal(body, &evs); err != nil || len(evs) != 1 {
		t.Fatalf("blob content %s: want a JSON array of one event (%v)", body, err)
	}
	ev := evs[0]
	if ev["id"] != "ord-0" || ev["eventType"] != "order.created" || ev["topic"] == nil || ev["data"] == nil {
		t.Errorf("blob event %v: want the event as delivered", ev)
	}
	if ev["lastHttpStatusCode"] != 400.0 || ev["deliveryAttempts"] != 1.0 || ev["lastDeliveryOutcome"] != "BadRequest" {
		t.Errorf("blob event %v: want 1 attempt, last status 400 (BadRequest)", ev)
	}
	if r, _ := ev["deadLetterReason"].(string); r == "" {
		t.Errorf("blob event %v: no deadLetterReason", ev)
	}
	for _, k := range []string{"publishTime", "lastDeliveryAttemptTime"} {
		if s, _ := ev[k].(string); s == "" {
			t.Errorf("blob event has no %s: %v", k, ev)
		}
	}
}

// checkBlobCreated checks a delivered BlobCreated event against Azure's shape.
func checkBlobCreated(t *testing.T, ev map[string]any, url string) {
	t.Helper()
	data, _ := ev["data"].(map[string]any)
	if ev["eventType"] != "Microsoft.Storage.BlobCreated" || data["url"] != url || data["api"] != "PutBlob" ||
		data["blobType"] != "BlockBlob" || data["contentType"] != "application/json" || data["contentLength"] == nil {
		t.Errorf("BlobCreated event %v, want url %s", ev, url)
	}
	if s, _ := ev["subject"].(string); !strings.HasPrefix(s, "/blobServices/default/containers/deadletters/blobs/ORDERS-DL/") {
		t.Errorf("BlobCreated subject %q", s)
	}
}

// TestDeadLetterBlobAzuriteStoppedThenBack: with the storage account down,
// the dead letter is kept and the write retried; the worker is replaced
// meanwhile; when the account is back, exactly one blob appears.
func TestDeadLetterBlobAzuriteStoppedThenBack(t *testing.T) {
	t.Parallel()
	e := newBlobEnv(t)
	bad := newReceiver(t, always(http.StatusBadRequest))
	sub := putSub(t, e.st, e.h, "orders-dl", "", `{`+webhook(bad.URL, `,"hookrelayPreValidated":true`)+`,`+
		blobDest(devenv.AzuriteAccount, "deadletters", "")+`}`)
	if err := e.azurite.Stop(); err != nil {
		t.Fatal(err)
	}
	if code, body := call(t, e.h, http.MethodPost, "/eventgrid/events", "application/json", egEvents("down", "order.created", 1)); code != http.StatusOK {
		t.Fatalf("publish: %d %s", code, body)
	}
	dlID := e.deadLetterOf(t, sub.ID)
	waitUntil(t, "a failed write", func() bool {
		d, err := e.c.DescribeWorkflowExecution(context.Background(), workflows.DeadLetterBlobWorkflowID(dlID), "")
		if err != nil {
			t.Fatal(err)
		}
		p := d.GetPendingActivities()
		return len(p) == 1 && p[0].GetAttempt() >= 2 && p[0].GetLastFailure() != nil
	})
	e.stopWorker()
	e.azurite = testenv.RestartAzurite(t, e.azurite)
	e.startWorker(t)
	if res := e.blobResult(t, dlID); res.URL == "" || res.GaveUp {
		t.Fatalf("result %+v, want a blob written", res)
	}
	if blobs := e.blobs(t, "deadletters", "ORDERS-DL/"); len(blobs) != 1 {
		for name, body := range blobs {
			t.Logf("blob %s: %s", name, body)
		}
		t.Fatalf("blobs: %d, want exactly 1", len(blobs))
	}
	recordHistory(t, e.c, workflows.DeadLetterBlobWorkflowID(dlID), "deadletter-blob-retried")
}

// recordHistory writes a workflow's history for the replay test of
// workflows/history_test.go when HOOKRELAY_RECORD_HISTORIES=1.
func recordHistory(t *testing.T, c client.Client, workflowID, name string) {
	t.Helper()
	if os.Getenv("HOOKRELAY_RECORD_HISTORIES") != "1" {
		return
	}
	b, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(testenv.History(t, c, workflowID))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("..", "workflows", "testdata", "histories", name+".json"), append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDeadLetterBlobNoCredentials: a PUT naming a storage account hookrelay
// has no credentials for is a 400 naming properties.deadLetterDestination.
func TestDeadLetterBlobNoCredentials(t *testing.T) {
	t.Parallel()
	h := apiServer(t, testenv.Store(t), nil, policies.EdgeDefaults{})
	code, body := call(t, h, http.MethodPut, "/eventgrid/subscriptions/orders-dl", "application/json",
		`{"properties":{`+webhook("http://127.0.0.1:9/hook", `,"hookrelayPreValidated":true`)+`,`+
			blobDest("someaccount", "deadletters", "")+`}}`)
	var got struct {
		Error struct {
			Field string `json:"field"`
		} `json:"error"`
	}
	_ = json.Unmarshal([]byte(body), &got)
	if code != http.StatusBadRequest || got.Error.Field != "properties.deadLetterDestination" {
		t.Fatalf("PUT: %d %s, want 400 naming properties.deadLetterDestination", code, body)
	}
}

// TestDeadLetterBlobGiveUpRecorded: a write given up publishes the
// operational event hookrelay.dead_letter.blob_failed once, however often the
// give-up runs, and counts it in hookrelay_dead_letter_blobs_total.
func TestDeadLetterBlobGiveUpRecorded(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	a := activities.New(st, testenv.Logger(), nil)
	a.Metrics = metrics.New()
	in := workflows.GiveUpInput{DeadLetterBlobInput: workflows.DeadLetterBlobInput{DeadLetterID: "dl_1",
		AccountID: "acct_default", StorageAccount: "sa", Container: "c"}, Error: "unreachable"}
	for range 2 {
		if err := a.GiveUpDeadLetterBlob(context.Background(), in); err != nil {
			t.Fatal(err)
		}
	}
	var n int
	if err := st.DB().Get(&n, `SELECT count(*) FROM events WHERE type = $1`, activities.DeadLetterBlobFailedEventType); err != nil || n != 1 {
		t.Errorf("%d %s events (%v), want 1", n, activities.DeadLetterBlobFailedEventType, err)
	}
	families, err := a.Metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var given float64
	for _, f := range families {
		for _, m := range f.GetMetric() {
			if f.GetName() == "hookrelay_dead_letter_blobs_total" && m.GetLabel()[0].GetValue() == "given_up" {
				given += m.GetCounter().GetValue()
			}
		}
	}
	if given != 1 {
		t.Errorf(`hookrelay_dead_letter_blobs_total{outcome="given_up"} = %v, want 1`, given)
	}
}
