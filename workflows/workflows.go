// Package workflows holds hookrelay's Temporal workflows: one Delivery per
// (event, subscription), whose durable timers follow its policy and which
// makes one activity execution per attempt, and one Sequencer per ordering
// key of an ordered subscription, which runs its Deliveries one at a time. Workflows never touch SQL or
// HTTP; the activities do.
package workflows

import (
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// DefaultQueuePrefix names the task queues hookrelay runs on by default.
const DefaultQueuePrefix = "hookrelay"

// Queues are hookrelay's task queues. Workflows and bookkeeping run on Main;
// first attempts on Deliveries and retries on Retries, so that failing
// messages never hold up the near real-time flow (docs/policies.md#workfront).
type Queues struct {
	Main, Deliveries, Retries string
}

// QueuesFor names the task queues of a prefix: the prefix itself for
// workflows, and "-deliveries" and "-retries" after it. A workflow finds its
// attempt queues from its own queue, so tests can run side by side, each on
// its own prefix.
func QueuesFor(prefix string) Queues {
	return Queues{Main: prefix, Deliveries: prefix + "-deliveries", Retries: prefix + "-retries"}
}

// DefaultQueues are the queues of DefaultQueuePrefix.
func DefaultQueues() Queues { return QueuesFor(DefaultQueuePrefix) }

// OrDefault is q, or DefaultQueues when q is the zero value.
func (q Queues) OrDefault() Queues {
	if q.Main == "" {
		return DefaultQueues()
	}
	return q
}

// queuesOf are the queues of the workflow running in ctx.
func queuesOf(ctx workflow.Context) Queues {
	return QueuesFor(workflow.GetInfo(ctx).TaskQueueName)
}

// Search attributes set on delivery (and endpoint) workflows, so the Web UI can
// list, say, every failing delivery of one endpoint.
var (
	AttrEndpointID     = temporal.NewSearchAttributeKeyKeyword("EndpointId")
	AttrSubscriptionID = temporal.NewSearchAttributeKeyKeyword("SubscriptionId")
	AttrEventType      = temporal.NewSearchAttributeKeyKeyword("EventType")
	AttrPolicy         = temporal.NewSearchAttributeKeyKeyword("Policy")
	AttrDeliveryStatus = temporal.NewSearchAttributeKeyKeyword("DeliveryStatus")
	AttrAttempts       = temporal.NewSearchAttributeKeyInt64("Attempts")
	AttrEndpointState  = temporal.NewSearchAttributeKeyKeyword("EndpointState")
)

// SearchAttributes lists every search attribute hookrelay uses with its type,
// for registering them with a Temporal server.
func SearchAttributes() map[string]string {
	m := map[string]string{}
	for _, k := range []temporal.SearchAttributeKeyKeyword{AttrEndpointID, AttrSubscriptionID, AttrEventType,
		AttrPolicy, AttrDeliveryStatus, AttrEndpointState} {
		m[k.GetName()] = "Keyword"
	}
	m[AttrAttempts.GetName()] = "Int"
	return m
}

// DeliveryWorkflowID is the id of a delivery's workflow:
// "delivery/<event>/<subscription>" for the first delivery of an event to a
// subscription, with "/<delivery id>" after it for a follow-up (a redrive, a
// retry or a redelivery), so no id is ever reused.
func DeliveryWorkflowID(eventID, subscriptionID, followUpID string) string {
	id := "delivery/" + eventID + "/" + subscriptionID
	if followUpID != "" {
		id += "/" + followUpID
	}
	return id
}

// DeliveryStartOptions are the options a Delivery workflow is started with:
// its deterministic id (never reused, so a delivery runs once however often
// it is started) and, for deliveries before versionQuietStart, the search
// attributes that find it and a memo with the URL. From versionQuietStart a
// delivery starts with neither: it gets its identity with DeliveryStatus and
// Attempts when it first leaves the common path (a failed or held-back
// attempt), so one that succeeds at its first attempt costs the server no
// search attribute and no upsert, and closes as Completed with none
// (README.md#in-the-temporal-web-ui); its URL is in its input. Eager start
// hands the first workflow task straight to a worker of the starting client
// (the API's own), which then makes the first attempt without a trip
// through matching; without such a worker the start is a normal one.
func DeliveryStartOptions(q Queues, workflowID string, in DeliveryInput) client.StartWorkflowOptions {
	opts := client.StartWorkflowOptions{
		ID:                    workflowID,
		TaskQueue:             q.Main,
		EnableEagerStart:      true,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		// Its tasks, and its activities' (attemptOptions), take their
		// turn with other endpoints' in Temporal's matching
		// (docs/endpoints.md#isolation).
		Priority: temporal.Priority{FairnessKey: in.EndpointID},
	}
	if in.Version < versionQuietStart {
		opts.TypedSearchAttributes = deliveryAttributes(in)
		opts.Memo = map[string]any{"url": in.URL}
	}
	return opts
}

// deliveryAttributes are the search attributes that name a Delivery.
func deliveryAttributes(in DeliveryInput) temporal.SearchAttributes {
	return temporal.NewSearchAttributes(identityAttributes(in)...)
}

// identityAttributes are a Delivery's identity as search attribute updates:
// its endpoint, subscription, event type and policy.
func identityAttributes(in DeliveryInput) []temporal.SearchAttributeUpdate {
	return []temporal.SearchAttributeUpdate{
		AttrEndpointID.ValueSet(in.EndpointID),
		AttrSubscriptionID.ValueSet(in.SubscriptionID),
		AttrEventType.ValueSet(in.EventType),
		AttrPolicy.ValueSet(in.Policy.Name),
	}
}

// Activity names. Workflows run activities by name; the worker registers the
// activities.Activities struct, whose methods carry these names (and Deliver
// and DeliverBatch on the deliveries and retries queues).
const (
	ActivityDeliver                 = "Deliver"
	ActivityDeliverBatch            = "DeliverBatch"
	ActivitySetStatus               = "SetStatus"
	ActivityFinish                  = "Finish"
	ActivitySetBatchStatus          = "SetBatchStatus"
	ActivityFinishBatch             = "FinishBatch"
	ActivityClaimBatch              = "ClaimBatch"
	ActivityEndpointSnapshot        = "EndpointSnapshot"
	ActivityRecordStateChange       = "RecordStateChange"
	ActivityPickProbe               = "PickProbe"
	ActivityReleaseWaiting          = "ReleaseWaiting"
	ActivityValidateEventGrid       = "ValidateEventGrid"
	ActivityFailEventGridValidation = "FailEventGridValidation"
	ActivityNextInSequence          = "NextInSequence"
)
