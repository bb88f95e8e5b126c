package main

import (
	"context"
	"errors"
	"slices"
	"testing"

	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"
)

// TestWatchEager: issue 22. A start answered with its first workflow task
// keeps its first attempt handed over; one answered without it, or that
// failed, drops it; other calls are let through untouched.
func TestWatchEager(t *testing.T) {
	var dropped []string
	watch := watchEager(func(id string) { dropped = append(dropped, id) })
	call := func(req, reply any, answer func(reply any), err error) error {
		return watch(context.Background(), "/m", req, reply, nil,
			func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
				answer(reply)
				return err
			})
	}
	start := func(id string) *workflowservice.StartWorkflowExecutionRequest {
		return &workflowservice.StartWorkflowExecutionRequest{WorkflowId: id, RequestEagerExecution: true}
	}
	eager := func(reply any) {
		reply.(*workflowservice.StartWorkflowExecutionResponse).EagerWorkflowTask = &workflowservice.PollWorkflowTaskQueueResponse{}
	}
	none := func(any) {}
	failed := errors.New("unavailable")
	if err := call(start("eager"), &workflowservice.StartWorkflowExecutionResponse{}, eager, nil); err != nil {
		t.Fatal(err)
	}
	_ = call(start("refused"), &workflowservice.StartWorkflowExecutionResponse{}, none, nil)
	if err := call(start("failed"), &workflowservice.StartWorkflowExecutionResponse{}, eager, failed); !errors.Is(err, failed) {
		t.Fatalf("failed start: %v, want its error", err)
	}
	_ = call(&workflowservice.SignalWorkflowExecutionRequest{SignalName: "signal"}, &workflowservice.SignalWorkflowExecutionResponse{}, none, nil)
	if want := []string{"refused", "failed"}; !slices.Equal(dropped, want) {
		t.Errorf("dropped %q, want %q", dropped, want)
	}
}
