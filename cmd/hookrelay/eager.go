package main

import (
	"context"

	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"
)

// watchEager calls notEager (store.FirstAttempts.NotEager) with the id of
// every workflow whose start did not bring its first workflow task back to
// this process (eager start not asked for, not granted, or the start
// failed): that task may go to any worker, so the first attempt handed over
// for it is dropped and the row its publish opened deleted, rather than
// left for another process to close as unknown. It is a gRPC client
// interceptor, the one place that sees the start's answer.
func watchEager(notEager func(workflowID string)) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
		invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		err := invoker(ctx, method, req, reply, cc, opts...)
		if start, ok := req.(*workflowservice.StartWorkflowExecutionRequest); ok {
			resp, _ := reply.(*workflowservice.StartWorkflowExecutionResponse)
			if err != nil || resp.GetEagerWorkflowTask() == nil {
				notEager(start.GetWorkflowId())
			}
		}
		return err
	}
}
