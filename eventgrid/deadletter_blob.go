package eventgrid

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"
)

// BlobDestination is where a subscription's dead letters are written as
// Azure writes them (docs/eventgrid.md#dead-letters-in-azure-blob-storage):
// the storage account its resourceId names, and a blob container.
type BlobDestination struct {
	ResourceID string `json:"resource_id"`
	Account    string `json:"account"`
	Container  string `json:"container"`
}

// FieldDeadLetterDestination is the field a PUT naming a storage account
// hookrelay has no credentials for is refused on.
const FieldDeadLetterDestination = pProps + "deadLetterDestination"

// storageAccountID is an Azure storage account's resource id; the last
// group is the account's name (3-24 lower-case letters and digits).
var storageAccountID = regexp.MustCompile(`(?i)^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.Storage/storageAccounts/([^/]+)$`)

// storageAccountName and containerName are Azure's naming rules: 3-24
// lower-case letters and digits; 3-63 of them and single hyphens between.
var (
	storageAccountName = regexp.MustCompile(`^[a-z0-9]{3,24}$`)
	containerName      = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
)

// blobDestination validates the StorageBlob properties that name a storage
// account; nil when they name none (dead letters stay in hookrelay's store
// only).
func blobDestination(p *DeadLetterProps) (*BlobDestination, error) {
	if p == nil || (p.ResourceID == "" && p.BlobContainerName == "") {
		return nil, nil
	}
	field := FieldDeadLetterDestination + ".properties."
	m := storageAccountID.FindStringSubmatch(p.ResourceID)
	if m == nil || !storageAccountName.MatchString(m[1]) {
		return nil, invalid(field+"resourceId", "must be a storage account's resource id, "+
			"/subscriptions/<id>/resourceGroups/<group>/providers/Microsoft.Storage/storageAccounts/<account>, got %q", p.ResourceID)
	}
	if n := len(p.BlobContainerName); n < 3 || n > 63 || !containerName.MatchString(p.BlobContainerName) {
		return nil, invalid(field+"blobContainerName", "must be a blob container name: 3 to 63 lower-case letters, "+
			"digits and single hyphens, starting and ending with a letter or digit, got %q", p.BlobContainerName)
	}
	return &BlobDestination{ResourceID: p.ResourceID, Account: m[1], Container: p.BlobContainerName}, nil
}

// blobNamespace derives dead-letter blob names from dead letter ids.
var blobNamespace = uuid.MustParse("6f1c2b1e-5a0e-4c7e-9d43-2f6b1e0c9a51")

// DeadLetterBlobName is the name of a dead letter's blob in its container, as
// Azure names them: the subscription's name in upper case, the UTC date and
// hour of the dead letter, not zero-padded, and a UUID, here derived from the
// dead letter's id so that writing it again names the same blob.
func DeadLetterBlobName(subscription string, at time.Time, deadLetterID string) string {
	at = at.UTC()
	return fmt.Sprintf("%s/%d/%d/%d/%d/%s.json", strings.ToUpper(subscription),
		at.Year(), int(at.Month()), at.Day(), at.Hour(), uuid.NewSHA1(blobNamespace, []byte(deadLetterID)))
}

// DeadLetterRecord is what a dead-letter blob says of why its event is there.
type DeadLetterRecord struct {
	Reason          string
	Attempts        int
	LastStatusCode  int
	LastErrorKind   string
	PublishTime     time.Time
	LastAttemptTime time.Time
}

// DeadLetterBlob is the content of a dead letter's blob: a JSON array holding
// the event as it was delivered (ev, in the subscription's schema) with the
// dead-letter properties beside its own, lower-case in the CloudEvents schema.
func DeadLetterBlob(ev Outgoing, eg *Settings, r DeadLetterRecord) ([]byte, error) {
	out, err := event(ev, eg.Schema)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("eventgrid: encode dead letter: %w", err)
	}
	fields := map[string]any{}
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, fmt.Errorf("eventgrid: decode dead letter: %w", err)
	}
	for k, v := range r.properties() {
		if eg.Schema == SchemaCloudEvents {
			k = strings.ToLower(k)
		}
		fields[k] = v
	}
	return json.Marshal([]any{fields})
}

// properties are the dead-letter properties, named as in the Event Grid
// schema.
func (r DeadLetterRecord) properties() map[string]any {
	return map[string]any{
		"deadLetterReason":        r.Reason,
		"deliveryAttempts":        r.Attempts,
		"lastDeliveryOutcome":     DeliveryOutcome(r.LastStatusCode, r.LastErrorKind),
		"lastHttpStatusCode":      r.LastStatusCode,
		"publishTime":             r.PublishTime.UTC(),
		"lastDeliveryAttemptTime": r.LastAttemptTime.UTC(),
	}
}

// DeliveryOutcome is Event Grid's name for how the last attempt went: the
// HTTP status's name without spaces (BadRequest, NotFound, …), Busy for 429
// and 503, TimedOut for 408 or a timeout, GenericError for an attempt that
// got no answer.
func DeliveryOutcome(status int, errorKind string) string {
	switch {
	case status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable:
		return "Busy"
	case status == http.StatusRequestTimeout || (status == 0 && errorKind == "timeout"):
		return "TimedOut"
	case status == 0 || http.StatusText(status) == "":
		return "GenericError"
	}
	return strings.NewReplacer(" ", "", "-", "").Replace(http.StatusText(status))
}
