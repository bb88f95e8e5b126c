package workflows_test

import (
	"reflect"
	"testing"

	"github.com/hookrelay/hookrelay/workflows"
)

// TestSearchAttributes: the names and types registered with a server are
// those the workflows set.
func TestSearchAttributes(t *testing.T) {
	t.Parallel()
	want := map[string]string{
		"EndpointId": "Keyword", "SubscriptionId": "Keyword", "EventType": "Keyword",
		"Policy": "Keyword", "DeliveryStatus": "Keyword", "Attempts": "Int", "EndpointState": "Keyword",
	}
	if got := workflows.SearchAttributes(); !reflect.DeepEqual(got, want) {
		t.Errorf("SearchAttributes() = %v, want %v", got, want)
	}
}
