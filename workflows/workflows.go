// Package workflows holds hookrelay's Temporal workflows: one Delivery per
// (event, subscription), whose durable timers follow its policy and which
// makes one activity execution per attempt. Workflows never touch SQL or
// HTTP; the activities do.
package workflows

import (
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

// Task queues. Workflows and bookkeeping run on TaskQueue; first attempts on
// DeliveriesQueue and retries on RetriesQueue, so that failing messages never
// hold up the near real-time flow (POLICIES.md §workfront).
const (
	TaskQueue       = "hookrelay"
	DeliveriesQueue = "hookrelay-deliveries"
	RetriesQueue    = "hookrelay-retries"
)

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
	return map[string]string{
		"EndpointId": "Keyword", "SubscriptionId": "Keyword", "EventType": "Keyword",
		"Policy": "Keyword", "DeliveryStatus": "Keyword", "Attempts": "Int",
		"EndpointState": "Keyword",
	}
}

// DeliveryStartOptions are the options a Delivery workflow is started with:
// its deterministic id (never reused, so a delivery runs once however often
// it is started), its search attributes and a memo with the URL. Eager start
// hands the first workflow task straight to a worker of the starting client
// (`hookrelay dev` shares one client between the API and the worker), which
// then makes the first attempt without a trip through matching; without
// such a worker (`hookrelay api` apart) the start is a normal one.
func DeliveryStartOptions(workflowID string, in DeliveryInput) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                    workflowID,
		TaskQueue:             TaskQueue,
		EnableEagerStart:      true,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		TypedSearchAttributes: temporal.NewSearchAttributes(
			AttrEndpointID.ValueSet(in.EndpointID),
			AttrSubscriptionID.ValueSet(in.SubscriptionID),
			AttrEventType.ValueSet(in.EventType),
			AttrPolicy.ValueSet(in.Policy.Name),
			AttrDeliveryStatus.ValueSet("pending"),
			AttrAttempts.ValueSet(0),
		),
		Memo: map[string]any{"url": in.URL},
	}
}
