package client_test

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/hookrelay/hookrelay/client"
)

// TestEveryOperationGenerated: the client has a method for every operation
// of api/openapi.json, so api.gen.go is not behind the document (run `go
// generate ./client` after changing it).
func TestEveryOperationGenerated(t *testing.T) {
	b, err := os.ReadFile("../api/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	typ := reflect.TypeOf(&client.ClientWithResponses{})
	n := 0
	for path, ops := range doc.Paths {
		for method, raw := range ops {
			var op struct {
				OperationID string `json:"operationId"`
			}
			if method == "parameters" || json.Unmarshal(raw, &op) != nil || op.OperationID == "" {
				continue
			}
			name := strings.ToUpper(op.OperationID[:1]) + op.OperationID[1:] + "WithResponse"
			if _, ok := typ.MethodByName(name); !ok {
				t.Errorf("%s %s (%s): the client has no %s; run go generate ./client", method, path, op.OperationID, name)
			}
			n++
		}
	}
	if n < 30 {
		t.Fatalf("only %d operations found", n)
	}
}
