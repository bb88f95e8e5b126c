package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/api/serviceerror"

	"github.com/hookrelay/hookrelay/azstorage"
	"github.com/hookrelay/hookrelay/eventgrid"
	"github.com/hookrelay/hookrelay/store"
	"github.com/hookrelay/hookrelay/workflows"
)

// Event types of dead-letter blobs (docs/eventgrid.md#dead-letters-in-azure-blob-storage).
const (
	// BlobCreatedEventType is Azure Storage's event for a blob written; it is
	// raised for each dead-letter blob when the subscription asks for events.
	BlobCreatedEventType = "Microsoft.Storage.BlobCreated"
	// DeadLetterBlobFailedEventType is the operational event of a blob write
	// given up.
	DeadLetterBlobFailedEventType = "hookrelay.dead_letter.blob_failed"
	blobCreatedIDPrefix           = "blobcreated-"
)

// DeadLetterBlobs is how dead letters reach Azure Blob Storage.
type DeadLetterBlobs struct {
	// Accounts are the storage accounts with credentials.
	Accounts *azstorage.Accounts
	// Delay is the wait before a blob is written
	// (HOOKRELAY_EVENTGRID_DEADLETTER_DELAY).
	Delay time.Duration
}

// startDeadLetterBlob starts the DeadLetterBlob workflow of a dead letter
// whose subscription names a storage account. Its id is the dead letter's, so
// a retried Finish starts it once; a failed start fails Finish, which is
// retried. Dead letters of hookrelay's own operational events (hookrelay.*)
// get no blob: the container holds the publishers' events, as on Azure.
func (a *Activities) startDeadLetterBlob(ctx context.Context, l store.DeadLetter, eg *eventgrid.Settings) error {
	dest := eg.DeadLetterBlob
	if dest == nil || a.Temporal == nil || store.IsOperational(l.EventType) {
		return nil
	}
	in := workflows.DeadLetterBlobInput{DeadLetterID: l.ID, AccountID: l.AccountID,
		StorageAccount: dest.Account, Container: dest.Container, StorageResourceID: dest.ResourceID}
	if a.DeadLetterBlobs != nil {
		in.Delay = a.DeadLetterBlobs.Delay
	}
	_, err := a.Temporal.ExecuteWorkflow(ctx, workflows.DeadLetterBlobStartOptions(a.Queues, in),
		workflows.DeadLetterBlobWorkflowType, in)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if err != nil && !errors.As(err, &started) {
		return fmt.Errorf("activities: start dead-letter blob of %s: %w", l.ID, err)
	}
	return nil
}

// WriteDeadLetterBlob writes a dead letter's blob as Azure Event Grid does:
// the event as delivered, with the dead-letter properties, in a JSON array,
// under a name derived from the dead letter (so never twice); then raises its
// BlobCreated event when the subscription asks for events.
func (a *Activities) WriteDeadLetterBlob(ctx context.Context, in workflows.DeadLetterBlobInput) (workflows.DeadLetterBlobResult, error) {
	f, err := a.Store.DeadLetterFacts(ctx, in.AccountID, in.DeadLetterID)
	if errors.Is(err, store.ErrNotFound) {
		return workflows.DeadLetterBlobResult{}, nil // deleted since (retention)
	}
	if err != nil {
		return workflows.DeadLetterBlobResult{}, err
	}
	t, err := a.Store.Target(ctx, f.DeliveryID)
	if err != nil {
		return workflows.DeadLetterBlobResult{}, err
	}
	eg, name := eventgrid.Of(t.Options), ""
	if eg == nil {
		eg = &eventgrid.Settings{Schema: eventgrid.SchemaEventGrid}
	}
	if t.SubscriptionName != nil {
		name = *t.SubscriptionName
	}
	body, err := eventgrid.DeadLetterBlob(t.Outgoing(eventgrid.Topic(a.EventGridTopic, t.AccountID)), eg, record(f))
	if err != nil {
		return workflows.DeadLetterBlobResult{}, err
	}
	blobName := eventgrid.DeadLetterBlobName(name, f.CreatedAt, f.ID)
	b, err := a.blobs().PutOnce(ctx, in.StorageAccount, in.Container, blobName, body)
	if err != nil {
		return workflows.DeadLetterBlobResult{}, err
	}
	if b.Created {
		a.Metrics.DeadLetterBlob("written")
		a.Logger.InfoContext(ctx, "dead_letter_blob_written", "dead_letter_id", f.ID, "url", b.URL)
	}
	if eg.RaiseDeadLetterEvent && !isBlobCreatedOfOurs(t) {
		err = a.raiseBlobCreated(ctx, in, f.ID, blobName, b.URL, len(body))
	}
	return workflows.DeadLetterBlobResult{URL: b.URL}, err
}

// blobs are the storage accounts, nil (none) when not configured.
func (a *Activities) blobs() *azstorage.Accounts {
	if a.DeadLetterBlobs == nil {
		return nil
	}
	return a.DeadLetterBlobs.Accounts
}

// record is what a dead letter's blob says of it.
func record(f store.DeadLetterFacts) eventgrid.DeadLetterRecord {
	r := eventgrid.DeadLetterRecord{Reason: f.Reason, Attempts: f.Attempts, LastStatusCode: f.LastStatusCode,
		LastErrorKind: f.LastErrorKind, PublishTime: f.PublishedAt, LastAttemptTime: f.CreatedAt}
	if f.LastAttemptAt != nil {
		r.LastAttemptTime = *f.LastAttemptAt
	}
	return r
}

// isBlobCreatedOfOurs tells whether the dead-lettered event is a BlobCreated
// event hookrelay raised: its dead letter raises none, so that none loops.
func isBlobCreatedOfOurs(t store.Target) bool {
	return t.EventType == BlobCreatedEventType && strings.HasPrefix(t.ExternalID, blobCreatedIDPrefix)
}

// blobCreatedData is the data of a Microsoft.Storage.BlobCreated event, as
// Azure Storage shapes it.
type blobCreatedData struct {
	API           string `json:"api"`
	ContentType   string `json:"contentType"`
	ContentLength int    `json:"contentLength"`
	BlobType      string `json:"blobType"`
	URL           string `json:"url"`
}

// raiseBlobCreated publishes, in the dead letter's account, the
// BlobCreated event of its blob (id derived from the dead letter's: once),
// and starts its deliveries.
func (a *Activities) raiseBlobCreated(ctx context.Context, in workflows.DeadLetterBlobInput, dlID, blobName, url string, size int) error {
	data, _ := json.Marshal(blobCreatedData{API: "PutBlob", ContentType: "application/json",
		ContentLength: size, BlobType: "BlockBlob", URL: url})
	return a.publishOwn(ctx, store.Event{AccountID: in.AccountID, ExternalID: blobCreatedIDPrefix + dlID,
		Type: BlobCreatedEventType, Subject: "/blobServices/default/containers/" + in.Container + "/blobs/" + blobName,
		Data: data, Fields: store.EventFields{Source: in.StorageResourceID}}, nil)
}

// GiveUpDeadLetterBlob records a blob write given up after
// workflows.DeadLetterBlobRetryFor: a log line, the metric, and the
// operational event hookrelay.dead_letter.blob_failed in the dead letter's
// account (id derived from the dead letter's: once). The dead letter stays in
// hookrelay's store.
func (a *Activities) GiveUpDeadLetterBlob(ctx context.Context, in workflows.GiveUpInput) error {
	a.Logger.ErrorContext(ctx, "dead_letter_blob_given_up", "dead_letter_id", in.DeadLetterID,
		"storage_account", in.StorageAccount, "container", in.Container, "error", in.Error)
	data, _ := json.Marshal(map[string]string{"dead_letter_id": in.DeadLetterID,
		"storage_account": in.StorageAccount, "container": in.Container, "error": in.Error})
	return a.publishOwn(ctx, store.Event{AccountID: in.AccountID, ExternalID: "deadletter-blob-failed-" + in.DeadLetterID,
		Type: DeadLetterBlobFailedEventType, Subject: "/deadletters/" + in.DeadLetterID, Data: data,
		Fields: store.EventFields{Source: eventgrid.DefaultSource + "/deadletters", DataVersion: "1"}},
		func() {
			a.Metrics.DeadLetterBlob("given_up")
			a.Metrics.Operational(DeadLetterBlobFailedEventType)
		})
}
